package main

import (
	"context"
	"crypto/subtle"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/hitchdev/hitch/bench/internal/proc"
)

// bareOptions are the hidden flags of the bare handler process.
type bareOptions struct {
	addr     string
	bodyFile string
	// method and path are the request it answers with the body.
	method, path string
	user, pass   string
}

// args are the bare handler's command-line arguments for o.
func (o bareOptions) args() []string {
	return []string{"--serve-bare", o.addr, "--bare-body-file", o.bodyFile,
		"--bare-method", o.method, "--bare-path", o.path, "--bare-user", o.user, "--bare-pass", o.pass}
}

// startBare writes body to a file in work and re-executes the benchmark as
// the bare handler on a free loopback port, so that it is a process of its
// own like Hitch, answering o.method o.path with body behind Basic auth
// o.user, o.pass. It returns the process and its base URL.
func startBare(work string, o bareOptions, body []byte) (*proc.Child, string, error) {
	o.bodyFile = filepath.Join(work, "bare-body.json")
	if err := os.WriteFile(o.bodyFile, body, 0o600); err != nil {
		return nil, "", err
	}
	self, err := os.Executable()
	if err != nil {
		return nil, "", err
	}
	if o.addr, err = proc.FreeLoopbackAddr(); err != nil {
		return nil, "", err
	}
	c, err := proc.Start("bare handler", filepath.Join(work, "bare.log"), os.Environ(), append([]string{self}, o.args()...)...)
	if err != nil {
		return nil, "", err
	}
	return c, "http://" + o.addr, nil
}

// serveBareCommand parses the hidden flags and serves until ctx ends.
func serveBareCommand(ctx context.Context, args []string) error {
	o, err := parseBareFlags(args)
	if err != nil {
		return err
	}
	return serveBare(ctx, o)
}

// parseBareFlags reads the hidden flags args made and checks them.
func parseBareFlags(args []string) (bareOptions, error) {
	var o bareOptions
	fs := flag.NewFlagSet("accounts --serve-bare", flag.ContinueOnError)
	fs.StringVar(&o.addr, "serve-bare", "", "listen address")
	fs.StringVar(&o.bodyFile, "bare-body-file", "", "file holding the response body")
	fs.StringVar(&o.method, "bare-method", "", "method of the request answered: GET or POST")
	fs.StringVar(&o.path, "bare-path", "", "path of the request answered")
	fs.StringVar(&o.user, "bare-user", "", "Basic auth user")
	fs.StringVar(&o.pass, "bare-pass", "", "Basic auth password")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	switch {
	case o.addr == "" || o.bodyFile == "" || o.method == "" || o.path == "" || o.user == "" || o.pass == "":
		return o, errors.New("--serve-bare needs --bare-body-file, --bare-method, --bare-path, --bare-user and --bare-pass")
	case o.method != http.MethodGet && o.method != http.MethodPost:
		return o, fmt.Errorf("--bare-method %q: want GET or POST", o.method)
	// A path ServeMux takes literally, and not /readyz, so that
	// registering it cannot panic.
	case !strings.HasPrefix(o.path, "/") || strings.ContainsAny(o.path, "{}? \t") || o.path == "/readyz":
		return o, fmt.Errorf("--bare-path %q: want a literal path other than /readyz", o.path)
	}
	return o, nil
}

// serveBare serves o.method o.path (the body, behind Basic auth) and
// GET /readyz on o.addr until ctx ends.
func serveBare(ctx context.Context, o bareOptions) error {
	body, err := os.ReadFile(o.bodyFile)
	if err != nil {
		return err
	}
	// The same server timeouts as hitch serve.
	srv := &http.Server{
		Handler:           bareMux(o, body),
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

// bareMux routes GET /readyz and o.method o.path, which answers body
// behind Basic auth. The request's own body is not read: net/http drains
// it.
func bareMux(o bareOptions, body []byte) *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"status":"ready"}`))
	})
	mux.Handle(o.method+" "+o.path, requireBasicAuth(o.user, o.pass, jsonBody(body)))
	return mux
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
