// Package intent classifies a prompt into one of the AHP intent categories
// (locate, understand, retrieve, explore, reason, validate, compare, track)
// by the trigger phrases the protocol documents. It is the harness's default
// answer to intent_detection events.
package intent

import "strings"

// Unknown is returned when no trigger phrase matches.
const Unknown = "unknown"

// table lists each intent with its trigger phrases, in priority order.
var table = []struct {
	intent   string
	triggers []string
}{
	{"locate", []string{"where is", "where are", "find", "search for", "look for"}},
	{"understand", []string{"how does", "explain", "what does"}},
	{"retrieve", []string{"remember", "earlier", "previous", "last time"}},
	{"explore", []string{"project structure", "what files", "list files", "overview"}},
	{"reason", []string{"why did", "why is", "why does", "cause"}},
	{"validate", []string{"verify", "check if", "debug", "is it correct"}},
	{"compare", []string{"difference between", "compare", " versus ", " vs "}},
	{"track", []string{"status", "progress", "history"}},
}

// Intents lists the intents Classify may return, besides Unknown.
func Intents() []string {
	out := make([]string, len(table))
	for i, e := range table {
		out[i] = e.intent
	}
	return out
}

// Result is a classification.
type Result struct {
	Intent     string
	Confidence float32
	Trigger    string // the phrase that decided, "" for Unknown
}

// Classify returns the intent whose trigger phrases match the prompt best.
// Confidence grows with the number of distinct triggers of the winning
// intent that appear, and is lower when other intents matched too.
func Classify(prompt string) Result {
	p := " " + strings.ToLower(prompt) + " "
	best, bestHits, total := -1, 0, 0
	trigger := ""
	for i, e := range table {
		hits, first := 0, ""
		for _, t := range e.triggers {
			if strings.Contains(p, t) {
				if hits == 0 {
					first = t
				}
				hits++
			}
		}
		total += hits
		if hits > bestHits {
			best, bestHits, trigger = i, hits, first
		}
	}
	if best < 0 {
		return Result{Intent: Unknown, Confidence: 0}
	}
	conf := float32(0.6) + 0.1*float32(bestHits-1)
	if conf > 0.95 {
		conf = 0.95
	}
	// Other intents matching too make the answer less certain.
	conf *= float32(bestHits) / float32(total)
	if conf < 0.3 {
		conf = 0.3
	}
	return Result{Intent: table[best].intent, Confidence: conf, Trigger: strings.TrimSpace(trigger)}
}
