package service

import (
	"strings"

	"github.com/ahp-go/ahp/config"
	"github.com/ahp-go/ahp/harness"
	"github.com/ahp-go/ahp/perception"
	"github.com/ahp-go/ahp/protocol"
)

// newPerceiver builds the context_perception answerer from the context
// section of the configuration. With no workspace roots and no facts the
// harness answers context_perception with an empty allow. The harness's
// own files (HarnessFiles, the shadow policy files and the sockets' lock
// files) are never read, whatever the roots: a root may well contain the
// data directory (the README's layout, ./ahp-data in the project).
func newPerceiver(cfg config.Config, configFile string) (harness.Perceiver, error) {
	c := cfg.Context
	if len(c.WorkspaceRoots) == 0 && len(c.Facts) == 0 {
		return nil, nil
	}
	facts := make([]protocol.Fact, 0, len(c.Facts))
	for _, f := range c.Facts {
		facts = append(facts, protocol.Fact{Content: f.Content, Source: f.Source, Confidence: f.Confidence})
	}
	p, err := perception.New(perception.Options{
		WorkspaceRoots: c.WorkspaceRoots, Facts: facts, ProjectName: c.ProjectName, Language: c.Language,
		MaxFiles: c.MaxFiles, MaxSnippets: c.MaxSnippets, Protected: perceptionProtected(cfg, configFile),
	})
	if err != nil {
		return nil, err
	}
	return p, nil
}

// perceptionProtected lists the files context_perception must never read.
func perceptionProtected(c config.Config, configFile string) []string {
	files := HarnessFiles(c, configFile)
	files = append(files, c.Policy.Shadow.Files...)
	for _, l := range c.Listen {
		if p, ok := strings.CutPrefix(l, "unix:"); ok && p != "" {
			files = append(files, p+SocketLockSuffix)
		}
	}
	return files
}
