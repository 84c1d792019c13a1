package transport

import (
	"context"
	"strings"
	"testing"
)

// A network scheme whose package is not linked in says which package to
// import (this test binary imports none of them).
func TestDialNamesThePackageOfAScheme(t *testing.T) {
	for scheme, pkg := range map[string]string{"http": "transport/httptransport", "wss": "transport/wstransport", "grpc": "transport/grpctransport"} {
		_, err := Dial(context.Background(), scheme+"://127.0.0.1:1", DialOptions{})
		if err == nil || !strings.Contains(err.Error(), `import _ "github.com/ahp-go/ahp/`+pkg+`"`) {
			t.Errorf("%s: %v", scheme, err)
		}
	}
}
