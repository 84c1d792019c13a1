// Command embed runs the ahp harness as a YAML file configures it, inside
// a Go program of its own: go run ./examples/embed ahp.yaml
package main

import (
	"context"
	"log"
	"log/slog"
	"os"
	"os/signal"

	"github.com/ahp-go/ahp/config"
	"github.com/ahp-go/ahp/service"
)

func main() {
	if len(os.Args) != 2 {
		log.Fatal("usage: embed CONFIG.yaml")
	}
	cfg, err := config.Load(os.Args[1])
	if err != nil {
		log.Fatal(err)
	}
	svc, err := service.New(cfg, service.Options{Logger: slog.Default(), ConfigFile: os.Args[1]})
	if err != nil {
		log.Fatal(err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	runErr := svc.Run(ctx) // until Ctrl-C (or SIGINT): then listeners stop
	if err := svc.Close(); err != nil || runErr != nil {
		log.Fatal(runErr, err)
	}
}
