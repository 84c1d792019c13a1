package auth

import (
	"context"
	"crypto/x509"
	"fmt"
	"os"
	"sort"

	"github.com/ahp-go/ahp/transport"
)

// Store is an Authenticator backed by a credentials file: principals with
// roles, their API keys and bearer tokens (stored as SHA-256 digests in
// memory whatever the file held), and the mapping of client certificate
// names to principals. A Store is immutable and safe for concurrent use.
type Store struct {
	principals []*transport.Principal
	apiKeys    []secretEntry
	bearers    []secretEntry
	certCN     map[string]int // certificate subject common name → principal
	certSAN    map[string]int // DNS name, email, URI or IP SAN → principal
	plaintext  int            // secrets the file held in plaintext
	warnings   []string
}

// LoadFile reads a credentials file (YAML; see docs/security.md).
func LoadFile(path string) (*Store, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("auth: credentials file: %w", err)
	}
	if fi.Size() > maxFileBytes {
		return nil, fmt.Errorf("auth: credentials file %s: larger than %d bytes", path, maxFileBytes)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("auth: credentials file: %w", err)
	}
	s, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("auth: credentials file %s: %w", path, err)
	}
	if s.hasPlaintext() && fi.Mode().Perm()&0o077 != 0 {
		s.warnings = append(s.warnings, fmt.Sprintf("%s holds plaintext secrets and is readable by other users (mode %v): chmod 600 it, or store sha256: digests", path, fi.Mode().Perm()))
	}
	return s, nil
}

// Parse builds a Store from the contents of a credentials file. Errors name
// principals and fields, never secret values.
func Parse(data []byte) (*Store, error) {
	f, err := decodeFile(data)
	if err != nil {
		return nil, err
	}
	s := &Store{certCN: map[string]int{}, certSAN: map[string]int{}}
	byID := map[string]int{}
	seen := map[[32]byte]string{}
	for i, fp := range f.Principals {
		if fp.ID == "" {
			return nil, fmt.Errorf("principals[%d]: id is empty", i)
		}
		if _, dup := byID[fp.ID]; dup {
			return nil, fmt.Errorf("principal %q: listed twice", fp.ID)
		}
		if len(fp.Roles) == 0 {
			return nil, fmt.Errorf("principal %q: no roles (want some of agent, observer, approver, admin)", fp.ID)
		}
		for _, r := range fp.Roles {
			if !KnownRole(r) {
				return nil, fmt.Errorf("principal %q: unknown role %q (want agent, observer, approver or admin)", fp.ID, r)
			}
		}
		idx := len(s.principals)
		byID[fp.ID] = idx
		s.principals = append(s.principals, &transport.Principal{ID: fp.ID, Roles: append([]string(nil), fp.Roles...)})
		add := func(kind string, list []string, dst *[]secretEntry) error {
			for j, raw := range list {
				sum, isPlain, err := parseSecret(raw)
				if err != nil {
					return fmt.Errorf("principal %q: %s[%d]: %w", fp.ID, kind, j, err)
				}
				key := sum
				key[0] ^= kindTag(kind)
				if other, dup := seen[key]; dup {
					return fmt.Errorf("principal %q: %s[%d]: the same secret is already given to principal %q", fp.ID, kind, j, other)
				}
				seen[key] = fp.ID
				if isPlain {
					s.plaintext++
					if len(raw) < 16 {
						s.warnings = append(s.warnings, fmt.Sprintf("principal %q: %s[%d] is shorter than 16 characters; use at least 32 random characters", fp.ID, kind, j))
					}
				}
				*dst = append(*dst, secretEntry{sum: sum, owner: idx})
			}
			return nil
		}
		if err := add("api_keys", fp.APIKeys, &s.apiKeys); err != nil {
			return nil, err
		}
		if err := add("bearer_tokens", fp.BearerTokens, &s.bearers); err != nil {
			return nil, err
		}
	}
	for i, m := range f.MTLS {
		idx, ok := byID[m.Principal]
		if !ok {
			return nil, fmt.Errorf("mtls[%d]: principal %q is not listed under principals", i, m.Principal)
		}
		switch {
		case m.CommonName != "" && m.SAN != "":
			return nil, fmt.Errorf("mtls[%d]: give common_name or san, not both", i)
		case m.CommonName != "":
			if _, dup := s.certCN[m.CommonName]; dup {
				return nil, fmt.Errorf("mtls[%d]: common_name %q is mapped twice", i, m.CommonName)
			}
			s.certCN[m.CommonName] = idx
		case m.SAN != "":
			if _, dup := s.certSAN[m.SAN]; dup {
				return nil, fmt.Errorf("mtls[%d]: san %q is mapped twice", i, m.SAN)
			}
			s.certSAN[m.SAN] = idx
		default:
			return nil, fmt.Errorf("mtls[%d]: needs common_name or san", i)
		}
	}
	if s.plaintext > 0 {
		s.warnings = append(s.warnings, fmt.Sprintf("%d secret(s) are stored in plaintext; prefer sha256: digests (see docs/security.md)", s.plaintext))
	}
	return s, nil
}

func kindTag(kind string) byte {
	if kind == "bearer_tokens" {
		return 0x5a
	}
	return 0
}

func (s *Store) hasPlaintext() bool { return s.plaintext > 0 }

// Warnings lists problems worth logging found while loading (plaintext
// secrets, short secrets, a file readable by others). They name principals,
// never secrets.
func (s *Store) Warnings() []string { return append([]string(nil), s.warnings...) }

// Principals returns the IDs of the principals in the store, sorted.
func (s *Store) Principals() []string {
	out := make([]string, len(s.principals))
	for i, p := range s.principals {
		out[i] = p.ID
	}
	sort.Strings(out)
	return out
}

// HasCertificateMappings reports whether the file maps any client
// certificate names to principals.
func (s *Store) HasCertificateMappings() bool { return len(s.certCN)+len(s.certSAN) > 0 }

// Authenticate maps c to a principal. Every presented form must be valid:
// a presented secret that matches nothing, or a verified certificate whose
// names map to no principal, is refused even when another form would pass;
// two forms naming different principals are refused as a conflict.
func (s *Store) Authenticate(_ context.Context, c Credentials) (*transport.Principal, error) {
	if c.Empty() {
		return nil, refuse(ReasonMissing, "no API key, bearer token or client certificate")
	}
	who := -1
	agree := func(idx int) bool {
		if who >= 0 && who != idx {
			return false
		}
		who = idx
		return true
	}
	if c.APIKey != "" {
		idx := lookup(s.apiKeys, c.APIKey)
		if idx < 0 {
			return nil, refuse(ReasonInvalid, "API key matches no principal")
		}
		agree(idx)
	}
	if c.Bearer != "" {
		idx := lookup(s.bearers, c.Bearer)
		if idx < 0 {
			return nil, refuse(ReasonInvalid, "bearer token matches no principal")
		}
		if !agree(idx) {
			return nil, refuse(ReasonConflict, "API key and bearer token name different principals")
		}
	}
	if len(c.PeerCertificates) > 0 {
		idx, name := s.certPrincipal(c.PeerCertificates[0])
		if idx < 0 {
			return nil, refuse(ReasonUnknownCert, "client certificate "+name+" maps to no principal")
		}
		if !agree(idx) {
			return nil, refuse(ReasonConflict, "client certificate and secret name different principals")
		}
	}
	return s.principals[who], nil
}

// certPrincipal finds the principal of a verified leaf certificate: the
// subject common name first, then the SANs (DNS names, email addresses,
// URIs, IP addresses). It also returns a printable name for errors.
func (s *Store) certPrincipal(leaf *x509.Certificate) (int, string) {
	cn := leaf.Subject.CommonName
	if idx, ok := s.certCN[cn]; ok && cn != "" {
		return idx, fmt.Sprintf("CN=%q", cn)
	}
	for _, n := range leaf.DNSNames {
		if idx, ok := s.certSAN[n]; ok {
			return idx, n
		}
	}
	for _, n := range leaf.EmailAddresses {
		if idx, ok := s.certSAN[n]; ok {
			return idx, n
		}
	}
	for _, u := range leaf.URIs {
		if idx, ok := s.certSAN[u.String()]; ok {
			return idx, u.String()
		}
	}
	for _, ip := range leaf.IPAddresses {
		if idx, ok := s.certSAN[ip.String()]; ok {
			return idx, ip.String()
		}
	}
	return -1, fmt.Sprintf("CN=%q", cn)
}
