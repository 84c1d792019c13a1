// Package store defines the durable records of a harness: the audit log of
// every event and decision, human approvals, memory facts and run records.
//
// The package holds the interfaces, the record types and the JSON Lines
// audit format; implementations live in sub-packages (store/sqlite now, a
// PostgreSQL one later) and prove their behaviour with store/storetest.
package store
