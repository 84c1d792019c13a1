package service

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/ahp-go/ahp/store"
)

// Audit records of the harness's own life. They have no session; the
// principal is "ahp".
const (
	// eventHarnessStart is written when a harness starts.
	eventHarnessStart = "harness_start"
	// eventHarnessStop is the final record of an orderly shutdown.
	eventHarnessStop = "harness_stop"
	// eventHarnessLost is written at start when the previous run ended
	// without its harness_stop record (killed, crashed, machine lost).
	eventHarnessLost = "harness_lost"
)

// RunMarkerFile, in the data directory, exists while a harness runs; an
// orderly shutdown removes it after writing its final record.
const RunMarkerFile = "harness.running"

// runMarker is the content of RunMarkerFile.
type runMarker struct {
	PID     int       `json:"pid"`
	Started time.Time `json:"started"`
	Version string    `json:"version"`
}

// recordStart writes harness_lost when the previous run left its marker,
// then harness_start and a new marker.
func (s *Service) recordStart(ctx context.Context) error {
	marker := filepath.Join(s.cfg.DataDir, RunMarkerFile)
	if b, err := os.ReadFile(marker); err == nil {
		var prev runMarker
		_ = json.Unmarshal(b, &prev)
		detail, _ := json.Marshal(prev)
		msg := fmt.Sprintf("the previous run (pid %d, started %s) ended without a final audit record: it was killed, crashed or lost its machine",
			prev.PID, prev.Started.UTC().Format(time.RFC3339))
		s.log.Warn("previous harness run ended without a final record", "pid", prev.PID, "started", prev.Started)
		if err := s.lifecycleRecord(ctx, eventHarnessLost, detail, msg); err != nil {
			return err
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("run marker: %w", err)
	}
	m := runMarker{PID: os.Getpid(), Started: time.Now().UTC(), Version: s.opts.version()}
	detail, _ := json.Marshal(m)
	if err := s.lifecycleRecord(ctx, eventHarnessStart, detail, ""); err != nil {
		return err
	}
	return os.WriteFile(marker, append(detail, '\n'), 0o600)
}

// recordStop writes the final harness_stop record and removes the marker.
func (s *Service) recordStop(why string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	detail, _ := json.Marshal(map[string]any{"pid": os.Getpid(), "reason": why})
	if err := s.lifecycleRecord(ctx, eventHarnessStop, detail, ""); err != nil {
		s.log.Error("final audit record not written", "error", err)
		return // the marker stays: the next start says so
	}
	if err := os.Remove(filepath.Join(s.cfg.DataDir, RunMarkerFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		s.log.Error("removing the run marker", "error", err)
	}
}

func (s *Service) lifecycleRecord(ctx context.Context, kind string, detail json.RawMessage, errText string) error {
	rec := &store.AuditRecord{EventType: kind, Principal: "ahp", Event: detail, Error: errText}
	if s.engine != nil {
		rec.PolicyVersion = s.engine.Version()
	}
	if err := s.db.Audit().Append(ctx, rec); err != nil {
		return fmt.Errorf("audit %s record: %w", kind, err)
	}
	return nil
}
