package main

import (
	"context"
	"crypto/subtle"
	"errors"
	"flag"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/hitchdev/hitch/bench/internal/proc"
)

// bareOptions are the hidden flags of the bare handler process.
type bareOptions struct {
	addr     string
	bodyFile string
	user     string
	pass     string
}

// startBare writes body to a file in work and re-executes the benchmark as
// the bare handler on a free loopback port, so that it is a process of its
// own like Hitch. It returns the process and its base URL.
func startBare(work string, body []byte, user, pass string) (*proc.Child, string, error) {
	bodyFile := filepath.Join(work, "accounts.json")
	if err := os.WriteFile(bodyFile, body, 0o600); err != nil {
		return nil, "", err
	}
	self, err := os.Executable()
	if err != nil {
		return nil, "", err
	}
	addr, err := proc.FreeLoopbackAddr()
	if err != nil {
		return nil, "", err
	}
	c, err := proc.Start("bare handler", filepath.Join(work, "bare.log"), os.Environ(),
		self, "--serve-bare", addr, "--bare-body-file", bodyFile, "--bare-user", user, "--bare-pass", pass)
	if err != nil {
		return nil, "", err
	}
	return c, "http://" + addr, nil
}

// serveBareCommand parses the hidden flags and serves until ctx ends.
func serveBareCommand(ctx context.Context, args []string) error {
	var o bareOptions
	fs := flag.NewFlagSet("accounts --serve-bare", flag.ContinueOnError)
	fs.StringVar(&o.addr, "serve-bare", "", "listen address")
	fs.StringVar(&o.bodyFile, "bare-body-file", "", "file holding the response body")
	fs.StringVar(&o.user, "bare-user", "", "Basic auth user")
	fs.StringVar(&o.pass, "bare-pass", "", "Basic auth password")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if o.addr == "" || o.bodyFile == "" || o.user == "" || o.pass == "" {
		return errors.New("--serve-bare needs --bare-body-file, --bare-user and --bare-pass")
	}
	return serveBare(ctx, o)
}

// serveBare serves GET /accounts/get (the body, behind Basic auth) and
// GET /readyz on o.addr until ctx ends.
func serveBare(ctx context.Context, o bareOptions) error {
	body, err := os.ReadFile(o.bodyFile)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"status":"ready"}`))
	})
	mux.Handle("GET /accounts/get", requireBasicAuth(o.user, o.pass, jsonBody(body)))
	// The same server timeouts as hitch serve.
	srv := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
	}
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		return err
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), proc.StopTimeout)
	defer cancel()
	return srv.Shutdown(shutdownCtx)
}

// requireBasicAuth answers 401 unless the request carries user and pass,
// compared in constant time.
func requireBasicAuth(user, pass string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, p, ok := r.BasicAuth()
		userOK := subtle.ConstantTimeCompare([]byte(u), []byte(user))
		passOK := subtle.ConstantTimeCompare([]byte(p), []byte(pass))
		if !ok || userOK&passOK != 1 {
			w.Header().Set("WWW-Authenticate", `Basic realm="bench"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// jsonBody writes body as an application/json 200 with a Content-Length,
// not chunked: framed as Hitch frames it, so both answers are the same on
// the wire.
func jsonBody(body []byte) http.Handler {
	length := strconv.Itoa(len(body))
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", length)
		w.Write(body)
	})
}
