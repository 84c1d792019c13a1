package service

import (
	"github.com/ahp-go/ahp/config"
	"github.com/ahp-go/ahp/harness"
	"github.com/ahp-go/ahp/perception"
	"github.com/ahp-go/ahp/protocol"
)

// newPerceiver builds the context_perception answerer from the context
// section of the configuration. With no workspace roots and no facts the
// harness answers context_perception with an empty allow.
func newPerceiver(c config.ContextConfig) (harness.Perceiver, error) {
	if len(c.WorkspaceRoots) == 0 && len(c.Facts) == 0 {
		return nil, nil
	}
	facts := make([]protocol.Fact, 0, len(c.Facts))
	for _, f := range c.Facts {
		facts = append(facts, protocol.Fact{Content: f.Content, Source: f.Source, Confidence: f.Confidence})
	}
	p, err := perception.New(perception.Options{
		WorkspaceRoots: c.WorkspaceRoots, Facts: facts, ProjectName: c.ProjectName, Language: c.Language,
		MaxFiles: c.MaxFiles, MaxSnippets: c.MaxSnippets,
	})
	if err != nil {
		return nil, err
	}
	return p, nil
}
