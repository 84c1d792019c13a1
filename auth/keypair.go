package auth

import (
	"crypto/tls"
	"fmt"
	"os"
	"sync"
	"time"
)

// keyPairCheckEvery is how often the certificate files are checked for
// changes.
const keyPairCheckEvery = 10 * time.Second

// keyPair holds a certificate and key loaded from files and reloads them
// when either file's modification time or size changes. A reload that
// fails keeps the previous pair (a half-written file during rotation must
// not take the listener down).
type keyPair struct {
	certFile, keyFile string

	mu      sync.Mutex
	cert    *tls.Certificate
	stamp   string
	checked time.Time
}

func newKeyPair(certFile, keyFile string) (*keyPair, error) {
	k := &keyPair{certFile: certFile, keyFile: keyFile}
	stamp, err := k.fileStamp()
	if err != nil {
		return nil, err
	}
	if err := k.load(stamp); err != nil {
		return nil, err
	}
	return k, nil
}

func (k *keyPair) fileStamp() (string, error) {
	var s string
	for _, f := range []string{k.certFile, k.keyFile} {
		fi, err := os.Stat(f)
		if err != nil {
			return "", fmt.Errorf("auth: TLS key pair: %w", err)
		}
		s += fmt.Sprintf("%d/%d;", fi.ModTime().UnixNano(), fi.Size())
	}
	return s, nil
}

func (k *keyPair) load(stamp string) error {
	c, err := tls.LoadX509KeyPair(k.certFile, k.keyFile)
	if err != nil {
		return fmt.Errorf("auth: TLS key pair %s, %s: %w", k.certFile, k.keyFile, err)
	}
	k.cert, k.stamp, k.checked = &c, stamp, time.Now()
	return nil
}

func (k *keyPair) get() (*tls.Certificate, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if time.Since(k.checked) < keyPairCheckEvery {
		return k.cert, nil
	}
	k.checked = time.Now()
	if stamp, err := k.fileStamp(); err == nil && stamp != k.stamp {
		_ = k.load(stamp) // keep the old pair when the new one does not load
	}
	return k.cert, nil
}
