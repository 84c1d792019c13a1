package grpctransport

import (
	"bytes"
	"strings"
	"testing"

	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	ahpv1 "github.com/ahp-go/ahp/transport/grpctransport/proto/ahp/v1"
)

// TestCodecMatchesProtobuf checks that the hand codec writes what the
// protobuf library writes and reads what it reads.
func TestCodecMatchesProtobuf(t *testing.T) {
	for _, n := range []int{0, 1, 127, 128, 300, 16 << 10, 1 << 20} {
		m := &ahpv1.Message{Json: []byte(strings.Repeat("j", n))}
		want, err := proto.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Codec.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Materialize(), want) {
			t.Fatalf("size %d: codec wrote %d bytes, protobuf %d", n, got.Len(), len(want))
		}
		got.Free()
		var back ahpv1.Message
		// Split the input in two buffers, as gRPC may hand it over.
		half := len(want) / 2
		in := mem.BufferSlice{mem.SliceBuffer(want[:half]), mem.SliceBuffer(want[half:])}
		if err := Codec.Unmarshal(in, &back); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(back.GetJson(), m.GetJson()) {
			t.Fatalf("size %d: round trip changed the message", n)
		}
	}
}

func TestCodecSkipsUnknownFieldsAndRefusesGarbage(t *testing.T) {
	b := protowire.AppendTag(nil, 7, protowire.VarintType)
	b = protowire.AppendVarint(b, 42)
	b = protowire.AppendTag(b, 1, protowire.BytesType)
	b = protowire.AppendBytes(b, []byte(`{"a":1}`))
	var m ahpv1.Message
	if err := Codec.Unmarshal(mem.BufferSlice{mem.SliceBuffer(b)}, &m); err != nil || string(m.GetJson()) != `{"a":1}` {
		t.Fatalf("unknown field: %q %v", m.GetJson(), err)
	}
	for _, g := range [][]byte{{0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f}, {0x0a, 0x05, 'a'}, {0xff}} {
		if err := Codec.Unmarshal(mem.BufferSlice{mem.SliceBuffer(g)}, &m); err == nil {
			t.Fatalf("garbage %x accepted", g)
		}
	}
}
