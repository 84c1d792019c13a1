package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// `ahp descriptor hash` prints, for descriptors that use aioc 0.2.8
// behaviours (gated handoffs, extension keys, js-yaml scalars), the hash
// aioc itself computes: the expected values are those aioc 0.2.8 produced
// for these fixtures (descriptor/testdata/aioc/groundtruth.json).
func TestDescriptorHashMatchesAioc(t *testing.T) {
	for file, want := range map[string]string{
		"handoffs_gated.yaml":      "sha256:23e26e974fa383e9dc078622aff3d3726a91d62a14eddf0bcdf58addd1b5935d",
		"top_level_extension.yaml": "sha256:526d7bcc740be2556c6d6a8f295bfe9535a031630151545d046916f497dd6238",
		"odd_paths.yaml":           "sha256:95031d7567b32df9860f82bf0618b5ccdcd6d2eeaecf7eed22fca38494a1db06",
		"scalars.yaml":             "sha256:d939cbe6639b180cdcdc5ed8394c83acf8219b5554647072ef474e369cd6a931",
	} {
		path := filepath.Join("..", "..", "descriptor", "testdata", "aioc", file)
		out, stderr, err := runDescriptorCmd(t, "hash", path)
		if err != nil || strings.TrimSpace(out) != want {
			t.Errorf("%s: got %q (stderr %q, %v), aioc: %s", file, out, stderr, err, want)
		}
	}
	// A where gate on a bare `true` reference is refused with aioc's words.
	_, stderr, err := runDescriptorCmd(t, "validate", filepath.Join("..", "..", "descriptor", "testdata", "aioc", "where_true.yaml"))
	const msg = `Agent "router" instruction where context path "state.flag" must be declared with type "boolean".`
	if err == nil || !strings.Contains(stderr, msg) {
		t.Errorf("where_true.yaml: %v, stderr %q", err, stderr)
	}
}
