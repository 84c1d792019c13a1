package main

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/ahp-go/ahp/config"
	"github.com/ahp-go/ahp/store"
	"github.com/ahp-go/ahp/store/postgres"
	"github.com/ahp-go/ahp/store/sqlite"
)

// storeFlags are the flags by which the commands that read a harness's
// store (audit, runs, memory, replay) find it, as ahp serve does:
// --store, else the store of the configuration (--config, or
// $AHP_CONFIG), else ahp.db in the data directory (--data-dir, else
// $AHP_DATA_DIR, else the configuration's data_dir, else the default).
type storeFlags struct {
	dataDir string
	store   string
	config  string
}

// register adds --data-dir, --store and --config to fs.
func (sf *storeFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&sf.dataDir, "data-dir", "", "data directory of the harness, holding ahp.db (or $AHP_DATA_DIR; default: the --config's data_dir, else "+config.DefaultDataDir()+")")
	fs.StringVar(&sf.store, "store", "", "the harness's store: postgres://USER@HOST:PORT/DB as given to ahp serve, or an SQLite file (default: the --config's store, else ahp.db in --data-dir)")
	fs.StringVar(&sf.config, "config", os.Getenv("AHP_CONFIG"), "configuration file of ahp serve, whose store and data_dir are read (or $AHP_CONFIG)")
}

// loadConfig returns the configuration of --config (the defaults without
// one) with the data directory and store the flags and $AHP_DATA_DIR give.
func (sf *storeFlags) loadConfig() (config.Config, error) {
	c := config.Default()
	if sf.config != "" {
		var err error
		if c, err = config.Load(sf.config); err != nil {
			return c, err
		}
	}
	if sf.dataDir != "" {
		c.DataDir = sf.dataDir
	} else if v := os.Getenv(dataDirEnv); v != "" {
		c.DataDir = v
	}
	if sf.store != "" {
		c.Store = sf.store
	}
	return c, nil
}

// storeTarget is where a store is: a PostgreSQL database or an SQLite file.
type storeTarget struct {
	url     string // postgres://… or postgresql://…; "" for SQLite
	path    string // the SQLite file
	dataDir bool   // path is ahp.db in a data directory (not named by --store)
}

// isPostgresURL reports whether s names a PostgreSQL database.
func isPostgresURL(s string) bool {
	return strings.HasPrefix(s, "postgres://") || strings.HasPrefix(s, "postgresql://")
}

// target returns where the store of c is. A store that is neither
// "sqlite" nor a PostgreSQL URL is an SQLite file's path.
func target(c config.Config) storeTarget {
	switch {
	case isPostgresURL(c.Store):
		return storeTarget{url: c.Store}
	case c.Store == "" || c.Store == "sqlite":
		return storeTarget{path: filepath.Join(c.DataDir, sqlite.FileName), dataDir: true}
	}
	return storeTarget{path: c.Store}
}

// String names the store for messages: the file, or the database's URL
// without its password.
func (t storeTarget) String() string {
	if t.url == "" {
		return t.path
	}
	return redactStoreURL(t.url)
}

// redactStoreURL returns a PostgreSQL URL with its password, in the user
// information or in the query, replaced by xxxxx.
func redactStoreURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "postgres://… (a URL that does not parse)"
	}
	if q := u.Query(); q.Has("password") {
		q.Set("password", "xxxxx")
		u.RawQuery = q.Encode()
	}
	return u.Redacted()
}

// hidePassword returns err with the URL's password, should its text hold
// it, replaced by xxxxx.
func (t storeTarget) hidePassword(err error) error {
	if err == nil || t.url == "" {
		return err
	}
	var secrets []string
	if u, perr := url.Parse(t.url); perr == nil {
		if p, ok := u.User.Password(); ok && p != "" {
			secrets = append(secrets, p, url.QueryEscape(p))
		}
		if p := u.Query().Get("password"); p != "" {
			secrets = append(secrets, p, url.QueryEscape(p))
		}
	} else {
		secrets = append(secrets, t.url)
	}
	msg := err.Error()
	for _, s := range secrets {
		if strings.Contains(msg, s) {
			msg = strings.ReplaceAll(msg, s, "xxxxx")
		}
	}
	if msg == err.Error() {
		return err
	}
	return errors.New(msg)
}

// storeOpen says how a command opens the store.
type storeOpen struct {
	// write opens it read-write (ahp memory add and delete); the others
	// read only: no migration, no write.
	write bool
	// tail is how often Tail looks for new records (0: the store's default).
	tail time.Duration
}

// open opens the store the flags name.
func (sf *storeFlags) open(ctx context.Context, o storeOpen) (store.Store, storeTarget, error) {
	c, err := sf.loadConfig()
	if err != nil {
		return nil, storeTarget{}, err
	}
	t := target(c)
	if t.url != "" {
		db, err := postgres.Open(ctx, t.url, postgres.Options{ReadOnly: !o.write, TailInterval: o.tail, MaxConns: 4})
		if err != nil {
			return nil, t, t.hidePassword(err)
		}
		return db, t, nil
	}
	db, err := sqlite.Open(ctx, t.path, sqlite.Options{ReadOnly: !o.write, TailInterval: o.tail})
	if err != nil {
		if t.dataDir {
			return nil, t, fmt.Errorf("%w (is --data-dir the harness's data directory? a harness on PostgreSQL: --store or --config)", err)
		}
		return nil, t, err
	}
	return db, t, nil
}

// withStore opens the store for the length of fn and closes it.
func (sf *storeFlags) withStore(ctx context.Context, o storeOpen, fn func(store.Store, storeTarget) error) error {
	db, t, err := sf.open(ctx, o)
	if err != nil {
		return err
	}
	err = t.hidePassword(fn(db, t))
	if cerr := db.Close(); err == nil && cerr != nil {
		err = cerr
	}
	return err
}
