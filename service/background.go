package service

import (
	"context"
	"fmt"
	"os"
	"time"
)

// watchPolicyFiles reloads the policy when policy.watch is set and a
// policy file changes (checked every second).
func (s *Service) watchPolicyFiles(ctx context.Context) {
	files := s.cfg.Policy.Files
	if s.engine == nil || !s.cfg.Policy.Watch || len(files) == 0 {
		return
	}
	t := time.NewTicker(time.Second)
	defer t.Stop()
	stamp := func() string {
		st := ""
		for _, f := range files {
			if fi, err := os.Stat(f); err == nil {
				st += fmt.Sprintf("%s:%d:%d;", f, fi.ModTime().UnixNano(), fi.Size())
			}
		}
		return st
	}
	last := stamp()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if now := stamp(); now != last {
				last = now
				s.log.Info("policy file changed: reloading")
				_ = s.Reload()
			}
		}
	}
}

// retain applies the audit retention settings at start and every hour.
func (s *Service) retain(ctx context.Context) {
	if s.db == nil {
		return
	}
	maxAge, maxRows := s.cfg.Audit.MaxAge.D(), s.cfg.Audit.MaxRows
	if maxAge <= 0 && maxRows <= 0 {
		return
	}
	t := time.NewTicker(time.Hour)
	defer t.Stop()
	for {
		n, err := s.db.Audit().Retain(ctx, maxAge, maxRows)
		switch {
		case err != nil && ctx.Err() == nil:
			s.log.Error("audit retention failed", "error", err)
		case n > 0:
			s.log.Info("audit retention deleted old records", "records", n, "max_age", maxAge, "max_rows", maxRows)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
