package policy

import (
	"reflect"
	"testing"

	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/common/types/traits"
)

// TestFindKeysIsFind: the one-pass reading of a decoded object gives the
// values Find gives key by key, in the order of the keys, for objects with
// the keys in any order, repeated, absent, or spelt with capitals (which
// Find folds, and findKeys then leaves to Find).
func TestFindKeysIsFind(t *testing.T) {
	for _, obj := range []string{
		`{}`,
		`{"cwd":"/a","workdir":"b","directory":"c","working_directory":"d"}`,
		`{"directory":"c","cwd":"/a","other":1}`,
		`{"cwd":"/a","cwd":"/b"}`,
		`{"CWD":"/a","workdir":"w"}`,
		`{"path":"x/../y","paths":["a","b"],"file_path":"f","notebook_path":"n","source":"s","destination":"d","files":["p","q"]}`,
		`{"Path":"x","path":"y"}`,
		`{"file":null,"filename":3,"absolute_path":{"a":1}}`,
	} {
		var arena objArena
		o, ok := decodeValue(obj, 0, &arena).(*jsonObject)
		if !ok {
			t.Fatalf("%s: not an object", obj)
		}
		for _, ks := range []struct {
			keys  []ref.Val
			index map[string]int
		}{{cwdKeys, cwdKeyIndex}, {fileKeys, fileKeyIndex}} {
			got := findKeys(o, ks.keys, ks.index, nil)
			var want []ref.Val
			for _, k := range ks.keys {
				if v, ok := traits.Mapper(o).Find(k); ok {
					want = append(want, v)
				}
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s: findKeys %v, Find %v", obj, got, want)
			}
		}
	}
	// Any other map is asked key by key.
	m := types.NewStringInterfaceMap(types.DefaultTypeAdapter, map[string]any{"workdir": "w", "cwd": "/c"})
	got := findKeys(m, cwdKeys, cwdKeyIndex, nil)
	if len(got) != 2 || got[0] != types.String("/c") || got[1] != types.String("w") {
		t.Errorf("a CEL map: %v", got)
	}
}
