package runs

import "github.com/ahp-go/ahp/protocol"

// successors is the legal transition graph of run statuses. Terminal
// statuses have no successors. A repeated status is not an edge: Apply
// treats it as a no-op.
var successors = map[protocol.RunStatus][]protocol.RunStatus{
	protocol.RunCreated:   {protocol.RunPlanning, protocol.RunExecuting, protocol.RunCancelled, protocol.RunFailed},
	protocol.RunPlanning:  {protocol.RunExecuting, protocol.RunCancelled, protocol.RunFailed},
	protocol.RunExecuting: {protocol.RunVerifying, protocol.RunCompleted, protocol.RunFailed, protocol.RunCancelled, protocol.RunPlanning},
	protocol.RunVerifying: {protocol.RunCompleted, protocol.RunFailed, protocol.RunExecuting, protocol.RunCancelled},
	protocol.RunCompleted: nil,
	protocol.RunFailed:    nil,
	protocol.RunCancelled: nil,
}

// Successors returns the statuses a run may move to from from, in a fixed
// order; none for a terminal or unknown status. From the empty status (no
// lifecycle snapshot seen yet) every status is allowed.
func Successors(from protocol.RunStatus) []protocol.RunStatus {
	if from == "" {
		out := make([]protocol.RunStatus, len(protocol.RunStatusNames))
		for i, n := range protocol.RunStatusNames {
			out[i] = protocol.RunStatus(n)
		}
		return out
	}
	return append([]protocol.RunStatus(nil), successors[from]...)
}

// Allowed reports whether the graph has an edge from → to. The first status
// of a run (from empty) may be any known status, since a harness can start
// observing a run late. A status repeated (from == to) is not an edge.
func Allowed(from, to protocol.RunStatus) bool {
	if _, known := successors[to]; !known || from == to {
		return false
	}
	if from == "" {
		return true
	}
	for _, s := range successors[from] {
		if s == to {
			return true
		}
	}
	return false
}
