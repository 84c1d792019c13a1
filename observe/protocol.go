package observe

import (
	"encoding/json"
	"strconv"
	"strings"
)

// Error codes of the observer protocol (the Host Protocol's, and JSON-RPC's).
const (
	CodeParseError           = -32700
	CodeInvalidRequest       = -32600
	CodeMethodNotFound       = -32601
	CodeInvalidParams        = -32602
	CodeInternalError        = -32603
	CodeUnsupportedVersion   = -32005
	CodeAuthRequired         = -32007
	CodeNotFound             = -32008
	CodePermissionDenied     = -32009
	CodeAlreadyDecided       = -32010
	maxRequestBytes          = 1 << 20
	maxSubscriptionsPerQuery = 256
	maxListSessions          = 500
)

// SupportedVersions are the observer protocol versions this server speaks,
// most preferred first.
var SupportedVersions = []string{"1.0.0"}

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
	s, _, _ = strings.Cut(s, "-") // pre-release tags are not ordered here
	parts := strings.Split(s, ".")
	if len(parts) != 3 {
		return semver{}, false
	}
	var v semver
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return semver{}, false
		}
		v[i] = n
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

// compatible reports whether two versions share a major version (and,
// below 1.0.0, a minor one), as SemVer says.
func compatible(a, b semver) bool {
	return a[0] == b[0] && (a[0] > 0 || a[1] == b[1])
}

// negotiate picks the version to speak: for the client's versions in its
// order of preference, the highest version this server supports that is
// compatible, capped at the client's. It returns false when none is.
func negotiate(offered []string) (string, bool) {
	for _, o := range offered {
		cv, ok := parseSemver(o)
		if !ok {
			continue
		}
		var best semver
		found := false
		for _, s := range SupportedVersions {
			sv, _ := parseSemver(s)
			if !compatible(cv, sv) {
				continue
			}
			if cv.less(sv) {
				sv = cv
			}
			if !found || best.less(sv) {
				best, found = sv, true
			}
		}
		if found {
			return best.String(), true
		}
	}
	return "", false
}
