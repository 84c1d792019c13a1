package main

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/ahp-go/ahp/policy"
)

// EnabledPacks returns the built-in packs the harness has rules of, or nil
// when it did not list its rules, or not all of them.
func (h *Harness) EnabledPacks() map[string]bool {
	if len(h.packs) == 0 || h.partial {
		return nil
	}
	on := map[string]bool{}
	for _, p := range h.packs {
		if p != "" {
			on[p] = true
		}
	}
	return on
}

// splitOff takes out the risky actions whose expected pack is a built-in
// pack that is off in the harness measured (approvals, off by default):
// a pack that is off cannot stop them, so they are counted apart, by
// source and pack, rather than as missed. --pack NAME=on measures them.
// With enabled nil (the harness did not say), nothing is taken out.
func splitOff(results []Result, enabled map[string]bool) ([]Result, map[string]map[string]int) {
	if enabled == nil {
		return results, nil
	}
	builtin := map[string]bool{}
	for _, n := range policy.PackNames() {
		builtin[n] = true
	}
	off := map[string]map[string]int{}
	kept := results[:0:0]
	for _, r := range results {
		c := r.Action.Case
		if c.Kind == Risky && builtin[c.Pack] && !enabled[c.Pack] {
			if off[c.Source] == nil {
				off[c.Source] = map[string]int{}
			}
			off[c.Source][c.Pack]++
			continue
		}
		kept = append(kept, r)
	}
	return kept, off
}

// writeOff says which risky actions were not counted, and why.
func writeOff(w io.Writer, off map[string]map[string]int) {
	var srcs []string
	for s := range off {
		srcs = append(srcs, s)
	}
	sort.Strings(srcs)
	for _, s := range srcs {
		var parts, flags []string
		var packs []string
		for p := range off[s] {
			packs = append(packs, p)
		}
		sort.Strings(packs)
		for _, p := range packs {
			parts = append(parts, fmt.Sprintf("%d of %s", off[s][p], p))
			flags = append(flags, "--pack "+p+"=on")
		}
		fmt.Fprintf(w, "%s: not counted, risky actions of packs that are off here: %s (%s measures them)\n",
			s, strings.Join(parts, ", "), strings.Join(flags, " "))
	}
}
