// Package service turns a validated configuration into a running harness:
// it opens the store, compiles (and reloads) the policy, builds the
// harness, serves every configured listener and the admin API, applies
// audit retention, and shuts all of it down in order.
//
// It is what `ahp serve` wraps: the command builds a config.Config from
// its flags and file, then calls New, Run and Close. A Go program can do
// the same to run "the ahp harness as configured by this YAML file"
// without the CLI (see examples/embed). The package keeps no state of its
// own between Services: two Services in one process are independent.
package service
