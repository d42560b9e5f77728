package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/hitchdev/hitch/internal/app"
	"github.com/hitchdev/hitch/internal/config"
	"github.com/hitchdev/hitch/internal/queue"
	"github.com/hitchdev/hitch/internal/seal"
	"github.com/hitchdev/hitch/internal/store"
	"github.com/hitchdev/hitch/internal/store/postgres"
	"github.com/hitchdev/hitch/internal/store/sqlite"
)

// hitch is what a command works with: Hitch's services (internal/app)
// over the store the command opened.
type hitch struct {
	*app.App
}

func newLogger(cfg *config.Config, w io.Writer) *slog.Logger {
	var level slog.Level
	_ = level.UnmarshalText([]byte(cfg.LogLevel))
	opts := &slog.HandlerOptions{Level: level}
	if cfg.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// openStore opens the configured database and applies migrations.
func openStore(ctx context.Context, cfg *config.Config) (store.Store, error) {
	db, err := cfg.Database()
	if err != nil {
		return nil, err
	}
	var st store.Store
	switch db.Driver {
	case "postgres":
		st, err = postgres.Open(ctx, db.DSN, postgres.Options{})
	default:
		st, err = sqlite.Open(ctx, db.DSN)
	}
	if err != nil {
		return nil, err
	}
	if err := st.Migrate(ctx); err != nil {
		st.Close()
		return nil, err
	}
	if err := queue.Migrate(ctx, st); err != nil {
		st.Close()
		return nil, err
	}
	return st, nil
}

// masterKey reads HITCH_MASTER_KEY, or in development the key file in the
// data directory (created on first use).
func masterKey(cfg *config.Config) ([]byte, error) {
	if cfg.MasterKey != "" {
		key, err := seal.ParseKey(cfg.MasterKey)
		if err != nil {
			return nil, fmt.Errorf("invalid HITCH_MASTER_KEY: %w", err)
		}
		return key, nil
	}
	// config.Validate has already refused production without a key.
	return seal.LoadOrCreateKeyFile(filepath.Join(cfg.DataDir, "master.key"))
}

// newHitch opens the configured store with the master key and builds the
// services over it.
func newHitch(ctx context.Context, cfg *config.Config, logOut io.Writer) (*hitch, error) {
	key, err := masterKey(cfg)
	if err != nil {
		return nil, err
	}
	box, err := seal.New(key)
	if err != nil {
		return nil, err
	}
	st, err := openStore(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if err := app.CheckMasterKey(ctx, st, box); err != nil {
		st.Close()
		return nil, err
	}
	a, err := app.New(cfg, app.Deps{Store: st, Box: box, Log: newLogger(cfg, logOut)})
	if err != nil {
		st.Close()
		return nil, err
	}
	return &hitch{a}, nil
}

// Close writes the request log's queued requests (within a few seconds),
// then closes the store.
func (h *hitch) Close() error {
	if h.RequestLog != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := h.RequestLog.Close(ctx); err != nil {
			h.Log.Warn("request log: queued requests were not written", "error", err)
		}
	}
	return h.Store.Close()
}
