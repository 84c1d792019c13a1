package admin

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/ahp-go/ahp/harness"
	"github.com/ahp-go/ahp/store"
	"github.com/ahp-go/ahp/transport"
)

// shadowReport answers GET /v1/shadow/report with the report of
// `ahp audit shadow-report --json`. Query parameters: since and until (RFC
// 3339, or a duration ago such as 24h), session, event_type, examples
// (1 to 100).
func (a *api) shadowReport(w http.ResponseWriter, r *http.Request, _ *transport.Principal) {
	q := r.URL.Query()
	now := time.Now()
	f := store.AuditFilter{SessionID: q.Get("session"), EventType: q.Get("event_type")}
	var err error
	if f.Since, err = timeParam(q.Get("since"), now); err != nil {
		writeError(w, http.StatusBadRequest, "since: "+err.Error())
		return
	}
	if f.Until, err = timeParam(q.Get("until"), now); err != nil {
		writeError(w, http.StatusBadRequest, "until: "+err.Error())
		return
	}
	var o harness.ShadowReportOptions
	if v := q.Get("examples"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100 {
			writeError(w, http.StatusBadRequest, "examples: want 1 to 100")
			return
		}
		o.Examples = n
	}
	rep, err := harness.BuildShadowReport(r.Context(), a.o.Store.Audit(), f, o)
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, rep)
}

// timeParam reads an RFC 3339 time or a duration before now; "" is the
// zero time.
func timeParam(v string, now time.Time) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
		return t, nil
	}
	if d, err := time.ParseDuration(v); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	return time.Time{}, errors.New("want an RFC 3339 time or a duration ago such as 24h")
}
