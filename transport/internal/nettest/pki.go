package nettest

import (
	"crypto/tls"
	"testing"
	"time"

	"github.com/ahp-go/ahp/auth/authtest"
)

// PKI holds a test CA with server and client certificates for 127.0.0.1.
type PKI struct {
	CA      *authtest.CA
	Server  tls.Certificate
	Client  tls.Certificate // CommonName CertCN
	Expired tls.Certificate // same name, expired yesterday
}

// NewPKI issues a CA and the certificates the transport tests use.
func NewPKI(t *testing.T) *PKI {
	ca := authtest.NewCA(t, "ahp test CA")
	return &PKI{
		CA:     ca,
		Server: ca.Server(t).TLSCertificate(t),
		Client: ca.Client(t, CertCN).TLSCertificate(t),
		Expired: ca.Issue(t, authtest.LeafOptions{
			CommonName: CertCN, Client: true,
			NotBefore: time.Now().Add(-48 * time.Hour), NotAfter: time.Now().Add(-24 * time.Hour),
		}).TLSCertificate(t),
	}
}

// ServerTLS is a server configuration that handles client certificates
// as mode says and verifies them against the CA.
func (p *PKI) ServerTLS(mode tls.ClientAuthType) *tls.Config {
	return &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{p.Server}, ClientCAs: p.CA.Pool(), ClientAuth: mode}
}

// ClientTLS is a client configuration trusting the CA and presenting cert
// (none when nil).
func (p *PKI) ClientTLS(cert *tls.Certificate) *tls.Config {
	c := &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: p.CA.Pool()}
	if cert != nil {
		c.Certificates = []tls.Certificate{*cert}
	}
	return c
}
