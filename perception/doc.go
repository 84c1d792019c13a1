// Package perception answers AHP context_perception events from the files of
// configured workspace roots: it turns the agent's target and query into
// search terms, scores files by where the terms occur and returns bounded
// snippets, a cached project summary and the configured facts. Every file it
// reads is resolved and checked to lie inside a root; nothing outside the
// roots is ever opened, and nothing of the harness's own files
// (Options.Protected) is read, searched or listed even inside a root.
package perception
