package runs

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/ahp-go/ahp/store"
)

// MarshalJSON writes empty lists as [] rather than null.
func (r Record) MarshalJSON() ([]byte, error) {
	type plain Record
	r.Timeline, r.Tasks, r.Flags = nonNil(r.Timeline), nonNil(r.Tasks), nonNil(r.Flags)
	return json.Marshal(plain(r))
}

// MarshalJSON writes empty lists as [] rather than null.
func (v Verification) MarshalJSON() ([]byte, error) {
	type plain Verification
	v.Checks, v.ResidualRisks = nonNil(v.Checks), nonNil(v.ResidualRisks)
	return json.Marshal(plain(v))
}

// Decode returns the Record held by a stored run record.
func Decode(rr store.RunRecord) (*Record, error) {
	if len(rr.Record) == 0 {
		return nil, fmt.Errorf("run %s: empty record", clip(rr.RunID, maxIDInTexts))
	}
	rec := new(Record)
	if err := json.Unmarshal(rr.Record, rec); err != nil {
		return nil, fmt.Errorf("run %s: decode record: %w", clip(rr.RunID, maxIDInTexts), err)
	}
	return rec, nil
}

// maxRecordBytes is the largest record JSON stored (a variable for tests).
var maxRecordBytes = store.MaxRunJSONBytes

// toStore encodes rec as a store.RunRecord at version. A record whose JSON
// exceeds store.MaxRunJSONBytes is shrunk (see shrink) and flagged.
func toStore(rec *Record, version int64) (store.RunRecord, error) {
	b, err := json.Marshal(rec)
	if err != nil {
		return store.RunRecord{}, fmt.Errorf("run %s: encode record: %w", clip(rec.RunID, maxIDInTexts), err)
	}
	if len(b) > maxRecordBytes {
		if b, err = shrink(rec); err != nil {
			return store.RunRecord{}, err
		}
	}
	return store.RunRecord{
		RunID:     rec.RunID,
		SessionID: rec.SessionID,
		Status:    string(rec.Status),
		UpdatedAt: rec.UpdatedAt,
		Record:    b,
		Flags:     append([]string(nil), rec.FlagKinds...),
		Version:   version,
	}, nil
}

// shrink makes rec fit maxRecordBytes: first it drops the evidence,
// artifacts and metadata of tasks and checks, then it halves the task and
// check lists until the JSON fits. It flags the record as truncated.
func shrink(rec *Record) ([]byte, error) {
	rec.addFlag(Flag{Kind: FlagTruncated, Seq: rec.Counts.Events,
		Detail: fmt.Sprintf("record over %d bytes: evidence, artifacts and metadata dropped", maxRecordBytes)})
	// The lists may be shared with a decoded snapshot: copy before editing.
	rec.Tasks = slices.Clone(rec.Tasks)
	for i := range rec.Tasks {
		t := &rec.Tasks[i]
		t.Evidence, t.Artifacts, t.Metadata = nil, nil, nil
	}
	if v := rec.Verification; v != nil {
		v.Checks = slices.Clone(v.Checks)
		for i := range v.Checks {
			c := &v.Checks[i]
			c.Evidence, c.Artifacts, c.Metadata = nil, nil, nil
		}
	}
	for {
		b, err := json.Marshal(rec)
		if err != nil {
			return nil, fmt.Errorf("run %s: encode record: %w", clip(rec.RunID, maxIDInTexts), err)
		}
		if len(b) <= maxRecordBytes {
			return b, nil
		}
		v := rec.Verification
		if len(rec.Tasks) == 0 && (v == nil || len(v.Checks) == 0) {
			return nil, fmt.Errorf("run %s: record over %d bytes even without tasks and checks: %w",
				clip(rec.RunID, maxIDInTexts), maxRecordBytes, store.ErrInvalid)
		}
		rec.Tasks = rec.Tasks[:len(rec.Tasks)/2]
		if v != nil {
			v.Checks = v.Checks[:len(v.Checks)/2]
		}
	}
}
