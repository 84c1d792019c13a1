package observe

import (
	"encoding/json"
	"strconv"
	"strings"
)

// Error codes of the observer protocol: JSON-RPC's and the Host
// Protocol's (types/common/errors.ts).
const (
	CodeParseError         = -32700
	CodeInvalidRequest     = -32600
	CodeMethodNotFound     = -32601
	CodeInvalidParams      = -32602
	CodeInternalError      = -32603
	CodeSessionNotFound    = -32001 // a session channel that does not exist
	CodeUnsupportedVersion = -32005 // data: {supportedVersions}
	CodeAuthRequired       = -32007 // data: {resources: [ProtectedResourceMetadata]}
	CodeNotFound           = -32008 // any other channel, tool call or approval
	CodePermissionDenied   = -32009
	// CodeConflict answers a change made on state that moved meanwhile:
	// an approval another approver already decided.
	CodeConflict             = -32011
	maxRequestBytes          = 1 << 20
	maxSubscriptionsPerQuery = 256
	maxListSessions          = 500
)

// SupportedVersions are the baselines of the observer protocol this
// server accepts, most preferred first: the Host Protocol's released
// baselines 1.0.0 and 0.9.0, and 0.8.0, whose shapes of what this server
// sends are the same (the default offer of the official clients built
// against it). An offered version is accepted when it is in a baseline's
// caret range (same major; below 1.0.0 the same minor; at least the
// baseline), and the answer is the highest offered version accepted.
var SupportedVersions = []string{"1.0.0", "0.9.0", "0.8.0"}

// request is an incoming JSON-RPC message (a request when ID is set).
type request struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
}

type notification struct {
	JSONRPC string `json:"jsonrpc"`
	Method  string `json:"method"`
	Params  any    `json:"params"`
}

type response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result"`
}

type errorResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   rpcError        `json:"error"`
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

func (e *rpcError) Error() string { return e.Message }

func errorf(code int, msg string) *rpcError { return &rpcError{Code: code, Message: msg} }

// Snapshot is a channel's state and the serverSeq it includes.
type Snapshot struct {
	Resource string `json:"resource"`
	State    any    `json:"state"`
	FromSeq  uint64 `json:"fromSeq"`
}

// semver is a parsed MAJOR.MINOR.PATCH.
type semver [3]int

func parseSemver(s string) (semver, bool) {
	// MAJOR.MINOR.PATCH only: no pre-release or build part, no leading
	// zeros (the Host Protocol's versioning rules).
	parts := strings.Split(s, ".")
	if len(parts) != 3 {
		return semver{}, false
	}
	var v semver
	for i, p := range parts {
		if p == "" || len(p) > 9 || (len(p) > 1 && p[0] == '0') || strings.Trim(p, "0123456789") != "" {
			return semver{}, false
		}
		v[i], _ = strconv.Atoi(p)
	}
	return v, true
}

func (a semver) less(b semver) bool {
	for i := range a {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return false
}

func (a semver) String() string {
	return strconv.Itoa(a[0]) + "." + strconv.Itoa(a[1]) + "." + strconv.Itoa(a[2])
}

// inRange reports whether v is in the caret range of baseline b.
func inRange(v, b semver) bool {
	if v[0] != b[0] || (v[0] == 0 && v[1] != b[1]) || (v[0] == 0 && v[1] == 0 && v[2] != b[2]) {
		return false
	}
	return !v.less(b)
}

// negotiate picks the version to speak: the highest of the client's
// versions that is in the caret range of a baseline, answered as the
// client wrote it. Malformed entries are skipped. It returns false when
// none is accepted.
func negotiate(offered []string) (string, bool) {
	var best semver
	answer := ""
	for _, o := range offered {
		cv, ok := parseSemver(o)
		if !ok {
			continue
		}
		for _, s := range SupportedVersions {
			sv, _ := parseSemver(s)
			if inRange(cv, sv) && (answer == "" || best.less(cv)) {
				best, answer = cv, o
			}
		}
	}
	return answer, answer != ""
}
