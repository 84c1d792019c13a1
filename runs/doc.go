// Package runs reduces the run contract events of AHP 2.4 (run_lifecycle,
// task_list and verification, spec §6) into one Record per run: its status
// timeline, its latest task list and verification, and the anomalies seen on
// the way (illegal transitions, stale, repeated or conflicting snapshots),
// and whether the agent's connection ended while the run was open
// (ConnectionEnded, from the harness).
//
// Apply is the pure reduction, used by tests and by Replay; a Reducer feeds
// live events through Apply into a store.Runs, keeping the raw events so a
// record can always be rebuilt. The rules are described in docs/runs.md.
package runs
