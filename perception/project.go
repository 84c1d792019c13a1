package perception

import (
	"context"
	"path"

	"github.com/ahp-go/ahp/protocol"
)

// summary describes the project: the root holding the location directory,
// or the agent's workspace, or the first root. A location directory other
// than a root is described itself, its files listed as key files.
func (p *Perceiver) summary(ctx context.Context, ws, loc *place) (*protocol.ProjectSummary, error) {
	base := p.roots[0]
	if ws != nil {
		base = ws.r
	}
	if loc != nil && loc.isDir {
		base = loc.r
	}
	info, err := p.cache.get(ctx, base.dir)
	if err != nil {
		return nil, err
	}
	ps := &protocol.ProjectSummary{ProjectName: p.projectName, Language: p.language}
	if ps.Language == "" {
		ps.Language = info.language()
	}
	if loc == nil || !loc.isDir || loc.rel == "." {
		ps.StructureDescription = info.describe("workspace root")
		ps.KeyFiles = info.keyFiles()
		return ps, nil
	}
	d, err := p.cache.get(ctx, loc.abs)
	if err != nil {
		return nil, err
	}
	ps.StructureDescription = d.describe(loc.rel)
	for i, name := range d.topFiles {
		if i == maxKeyFiles {
			break
		}
		ps.KeyFiles = append(ps.KeyFiles, path.Join(loc.rel, name))
	}
	return ps, nil
}
