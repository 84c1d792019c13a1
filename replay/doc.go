// Package replay re-decides recorded audit records under another policy and
// reports which decisions would change. It reads the audit stream in the
// order it was recorded (from the store or from an `ahp audit export` file),
// rebuilds the session counters policies read, evaluates every blocking
// event with the new policy.Engine without executing tools or contacting
// agents, and compares the new decisions with the recorded ones.
//
// The same input and policy always give the same report, byte for byte;
// docs/replay.md describes the choices that make a replay match what the
// live harness would have decided.
package replay
