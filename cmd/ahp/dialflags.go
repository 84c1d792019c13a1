package main

import (
	"github.com/spf13/pflag"

	"github.com/ahp-go/ahp/transport"
)

// addDialFlags adds the flags that choose how to reach a harness. Network
// transports add their credential and TLS flags here.
func addDialFlags(f *pflag.FlagSet, o *transport.DialOptions) {
	f.IntVar(&o.MaxMessageBytes, "max-message-bytes", transport.DefaultMaxMessageBytes, "largest message accepted from the harness")
	for _, add := range dialFlagHooks {
		add(f, o)
	}
}

// finishDialFlags completes DialOptions after parsing (for example loading
// certificates named by flags).
func finishDialFlags(o *transport.DialOptions) error {
	for _, fin := range dialFinishHooks {
		if err := fin(o); err != nil {
			return err
		}
	}
	return nil
}

var (
	dialFlagHooks   []func(*pflag.FlagSet, *transport.DialOptions)
	dialFinishHooks []func(*transport.DialOptions) error
)
