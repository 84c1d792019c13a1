package main

import (
	"fmt"
	"os"

	"github.com/spf13/pflag"

	"github.com/ahp-go/ahp/auth"
	"github.com/ahp-go/ahp/transport"
	_ "github.com/ahp-go/ahp/transport/grpctransport" // grpc:// and grpcs:// addresses
	_ "github.com/ahp-go/ahp/transport/httptransport" // http:// and https:// addresses
)

// netDialFlags are the credential and TLS flags of commands that connect
// to a harness. Secrets are read from the environment when the flags are
// not given, and flag defaults never show them.
var netDialFlags struct {
	cert, key, ca string
}

func init() {
	dialFlagHooks = append(dialFlagHooks, func(f *pflag.FlagSet, o *transport.DialOptions) {
		f.StringVar(&o.APIKey, "api-key", "", "API key sent as X-API-Key (prefer $AHP_API_KEY: flags end up in shell history and ps output)")
		f.StringVar(&o.BearerToken, "bearer", "", "bearer token sent as Authorization: Bearer (prefer $AHP_BEARER_TOKEN)")
		f.StringVar(&netDialFlags.cert, "cert", "", "PEM client certificate for mutual TLS (or $AHP_CERT)")
		f.StringVar(&netDialFlags.key, "key", "", "PEM private key of --cert (or $AHP_KEY)")
		f.StringVar(&netDialFlags.ca, "ca", "", "PEM CA bundle that signed the harness certificate (or $AHP_CA; system roots when unset)")
	})
	dialFinishHooks = append(dialFinishHooks, finishNetDialFlags)
}

func finishNetDialFlags(o *transport.DialOptions) error {
	fromEnv := func(v *string, name string) {
		if *v == "" {
			*v = os.Getenv(name)
		}
	}
	fromEnv(&o.APIKey, "AHP_API_KEY")
	fromEnv(&o.BearerToken, "AHP_BEARER_TOKEN")
	fromEnv(&netDialFlags.cert, "AHP_CERT")
	fromEnv(&netDialFlags.key, "AHP_KEY")
	fromEnv(&netDialFlags.ca, "AHP_CA")
	if netDialFlags.cert == "" && netDialFlags.key == "" && netDialFlags.ca == "" {
		return nil
	}
	cfg, err := auth.ClientTLSConfig(netDialFlags.cert, netDialFlags.key, netDialFlags.ca)
	if err != nil {
		return fmt.Errorf("TLS: %w", err)
	}
	o.TLS = cfg
	return nil
}
