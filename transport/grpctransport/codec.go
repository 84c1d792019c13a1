package grpctransport

import (
	"errors"

	"google.golang.org/grpc/encoding"
	grpcproto "google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"

	ahpv1 "github.com/ahp-go/ahp/transport/grpctransport/proto/ahp/v1"
)

// Codec is the gRPC codec both sides of this transport use. It encodes
// ahpv1.Message (one bytes field) directly, which is what the protobuf
// library would write, byte for byte, without its reflection; every other
// message (the health service's, for example) goes to the standard proto
// codec. It is named "proto", so peers that use the standard codec
// interoperate.
var Codec encoding.CodecV2 = messageCodec{}

type messageCodec struct{}

func (messageCodec) Name() string { return grpcproto.Name }

func standard() encoding.CodecV2 { return encoding.GetCodecV2(grpcproto.Name) }

// Marshal writes field 1 (wire type bytes) unless it is empty, as proto3
// does.
func (messageCodec) Marshal(v any) (mem.BufferSlice, error) {
	m, ok := v.(*ahpv1.Message)
	if !ok {
		return standard().Marshal(v)
	}
	n := len(m.GetJson())
	if n == 0 {
		return mem.BufferSlice{}, nil
	}
	size := protowire.SizeTag(1) + protowire.SizeBytes(n)
	if mem.IsBelowBufferPoolingThreshold(size) {
		b := make([]byte, 0, size)
		b = protowire.AppendTag(b, 1, protowire.BytesType)
		b = protowire.AppendBytes(b, m.GetJson())
		return mem.BufferSlice{mem.SliceBuffer(b)}, nil
	}
	pool := mem.DefaultBufferPool()
	buf := pool.Get(size)
	b := protowire.AppendTag((*buf)[:0], 1, protowire.BytesType)
	b = protowire.AppendBytes(b, m.GetJson())
	*buf = b
	return mem.BufferSlice{mem.NewBuffer(buf, pool)}, nil
}

var errBadMessage = errors.New("grpctransport: malformed ahp.v1.Message")

// Unmarshal reads field 1 and skips unknown fields, as the protobuf
// library does; the JSON is copied out of gRPC's buffers.
func (messageCodec) Unmarshal(data mem.BufferSlice, v any) error {
	m, ok := v.(*ahpv1.Message)
	if !ok {
		return standard().Unmarshal(data, v)
	}
	var b []byte
	if len(data) == 1 {
		b = data[0].ReadOnlyData()
	} else {
		buf := data.MaterializeToBuffer(mem.DefaultBufferPool())
		defer buf.Free()
		b = buf.ReadOnlyData()
	}
	m.Reset()
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return errBadMessage
		}
		b = b[n:]
		if num == 1 && typ == protowire.BytesType {
			val, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return errBadMessage
			}
			m.Json = append([]byte(nil), val...) // last one wins, as in protobuf
			b = b[n:]
			continue
		}
		n = protowire.ConsumeFieldValue(num, typ, b)
		if n < 0 {
			return errBadMessage
		}
		b = b[n:]
	}
	return nil
}
