package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"html/template"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/hitchdev/hitch/client"
	"github.com/hitchdev/hitch/internal/config"
)

// tryCredentials are what try-production keeps in its folder between runs.
type tryCredentials struct {
	MasterKey       string `json:"master_key"`
	ClientID        string `json:"client_id"`
	ClientSecret    string `json:"client_secret"`
	ConnectorID     string `json:"connector_id"`
	ConnectorSecret string `json:"connector_secret"`
	ShopAdminToken  string `json:"shop_admin_token"`
	WebhookSecret   string `json:"webhook_secret"`
}

// tryProductionFlags runs the production path on one machine: the
// reference shop, hitch serve --env production and the reference connector,
// each a process of its own, behind a page on --addr that plays the
// developer's app (it creates sessions, opens the web SDK, and shows the
// signed webhooks it receives). Production frames the hosted flow only in
// the developer's https origins or Hitch's own, so the page and Hitch share
// --addr: the page's paths are served here and the rest goes to Hitch.
func tryProductionFlags(fs *flag.FlagSet) runFunc {
	dir := fs.String("dir", "hitch-production", "folder for the database, the master key and the credentials (kept between runs)")
	shopAddr := fs.String("shop-addr", "127.0.0.1:8090", "address of the reference shop")
	refresh := fs.Duration("every", time.Minute, "how often linked accounts are refreshed")
	return func(ctx context.Context, cfg *config.Config, out, errOut io.Writer) error {
		self, err := os.Executable()
		if err != nil {
			return err
		}
		if err := os.MkdirAll(*dir, 0o700); err != nil {
			return err
		}
		t := &tryRun{self: self, dir: *dir, out: out, errOut: errOut}
		creds, err := t.credentials(ctx)
		if err != nil {
			return err
		}
		hitchAddr, err := freeAddr()
		if err != nil {
			return err
		}
		env := t.env(creds, *refresh)
		shop := "http://" + *shopAddr
		hitchURL := "http://" + hitchAddr
		publicURL := "http://" + cfg.Addr
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		var wg sync.WaitGroup
		defer wg.Wait()
		start := func(name string, env []string, args ...string) {
			wg.Go(func() {
				if err := t.run(ctx, name, env, args...); err != nil && ctx.Err() == nil {
					fmt.Fprintf(errOut, "%s stopped: %v\n", name, err)
					cancel()
				}
			})
		}
		start("shop", []string{"HITCH_LOG_LEVEL=warn"}, "refshop", "--addr", *shopAddr, "--admin-token", creds.ShopAdminToken)
		start("hitch", append(env, "HITCH_PUBLIC_URL="+publicURL, "HITCH_LOG_LEVEL=warn"), "serve", "--addr", hitchAddr)
		start("connector", []string{"CONNECTOR_ID=" + creds.ConnectorID, "CONNECTOR_SECRET=" + creds.ConnectorSecret},
			"refconnector", "--hitch-url", hitchURL, "--site", shop)

		app := &tryApp{hitch: hitchURL, creds: creds, credsPath: filepath.Join(*dir, "credentials.json"),
			api: client.New(hitchURL, creds.ClientID, creds.ClientSecret)}
		if err := app.setup(ctx, publicURL); err != nil {
			return err
		}
		ln, err := net.Listen("tcp", cfg.Addr)
		if err != nil {
			return fmt.Errorf("listen on %s: %w", cfg.Addr, err)
		}
		srv := &http.Server{Handler: app.handler(), ReadHeaderTimeout: 10 * time.Second}
		go func() { _ = srv.Serve(ln) }()
		fmt.Fprintf(out, `
Hitch runs in production mode, with the reference shop and its connector.

  Your app:        %[1]s/try      (opens the web SDK; shows the webhooks it receives)
  Hitch API:       %[1]s          (client_id %[2]s, secret in %[3]s)
  Reference shop:  %[4]s    (sign in as ada@refshop.example / correct-horse-battery;
                   otp@refshop.example asks an e-mailed code: %[4]s/mailbox)

Stop with Ctrl-C. The database and credentials stay in %[5]s.
`, publicURL, creds.ClientID, filepath.Join(*dir, "credentials.json"), shop, *dir)
		<-ctx.Done()
		shutdown, cancelShutdown := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancelShutdown()
		return srv.Shutdown(shutdown)
	}
}

type tryRun struct {
	self, dir   string
	out, errOut io.Writer
}

func (t *tryRun) env(c *tryCredentials, refresh time.Duration) []string {
	return []string{"HITCH_ENV=production", "HITCH_MASTER_KEY=" + c.MasterKey, "HITCH_DATA_DIR=" + t.dir,
		"HITCH_WEBHOOK_ALLOW_PRIVATE=true", "HITCH_REFRESH_INTERVAL=" + refresh.String()}
}

// credentials reads the folder's credentials, making them on the first run.
func (t *tryRun) credentials(ctx context.Context) (*tryCredentials, error) {
	path := filepath.Join(t.dir, "credentials.json")
	var c tryCredentials
	if b, err := os.ReadFile(path); err == nil {
		return &c, json.Unmarshal(b, &c)
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	c.MasterKey, c.ShopAdminToken = randomHex(32), randomHex(16)
	env := t.env(&c, time.Hour)
	var dev struct {
		ClientID string `json:"client_id"`
		Secret   string `json:"secret"`
	}
	if err := t.runJSON(ctx, env, &dev, "clients", "create", "--name", "Try production", "--env", "production", "--json"); err != nil {
		return nil, err
	}
	var conn struct {
		ID     string `json:"id"`
		Secret string `json:"secret"`
	}
	if err := t.runJSON(ctx, env, &conn, "connectors", "create", "--name", "Reference shop", "--json"); err != nil {
		return nil, err
	}
	c.ClientID, c.ClientSecret, c.ConnectorID, c.ConnectorSecret = dev.ClientID, dev.Secret, conn.ID, conn.Secret
	b, _ := json.MarshalIndent(c, "", "  ")
	return &c, os.WriteFile(path, b, 0o600)
}

func (t *tryRun) runJSON(ctx context.Context, env []string, out any, args ...string) error {
	cmd := exec.CommandContext(ctx, t.self, args...)
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	b, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("hitch %s: %v: %s", strings.Join(args[:2], " "), err, stderr.String())
	}
	return json.Unmarshal(b, out)
}

// run runs the hitch binary with args until ctx ends, its output prefixed
// with name.
func (t *tryRun) run(ctx context.Context, name string, env []string, args ...string) error {
	cmd := exec.CommandContext(ctx, t.self, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 10 * time.Second
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			fmt.Fprintf(t.errOut, "%-9s %s\n", name, sc.Text())
		}
	}()
	err := cmd.Run()
	pw.Close()
	return err
}

// tryApp is the developer's app of try-production: its page, its session
// creation and its webhook endpoint, on the same origin as Hitch.
type tryApp struct {
	hitch     string
	creds     *tryCredentials
	credsPath string
	api       *client.Client

	mu     sync.Mutex
	events []string
}

// setup waits for Hitch, then registers the app's webhook endpoint once.
func (a *tryApp) setup(ctx context.Context, publicURL string) error {
	deadline := time.Now().Add(time.Minute)
	for {
		resp, err := http.Get(a.hitch + "/healthz")
		if err == nil {
			resp.Body.Close()
			break
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return errors.New("try-production: hitch did not start")
		}
		time.Sleep(200 * time.Millisecond)
	}
	if a.creds.WebhookSecret != "" {
		return nil
	}
	body, _ := json.Marshal(map[string]string{"url": publicURL + "/try/webhooks"})
	req, _ := http.NewRequestWithContext(ctx, "POST", a.hitch+"/webhooks/endpoints", bytes.NewReader(body))
	req.SetBasicAuth(a.creds.ClientID, a.creds.ClientSecret)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var ep struct {
		Secret string `json:"secret"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&ep); err != nil || ep.Secret == "" {
		return fmt.Errorf("try-production: register the webhook endpoint: %d %v", resp.StatusCode, err)
	}
	a.creds.WebhookSecret = ep.Secret
	b, _ := json.MarshalIndent(a.creds, "", "  ")
	return os.WriteFile(a.credsPath, b, 0o600)
}

func (a *tryApp) handler() http.Handler {
	target, _ := url.Parse(a.hitch)
	proxy := httputil.NewSingleHostReverseProxy(target)
	mux := http.NewServeMux()
	mux.Handle("/", proxy)
	mux.HandleFunc("GET /try", a.page)
	mux.HandleFunc("POST /try/session", a.session)
	mux.HandleFunc("POST /try/webhooks", a.webhook)
	return mux
}

var tryPage = template.Must(template.New("try").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Your app (Hitch, production)</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<script src="/sdk/hitch.js"></script>
<style>body{font:16px system-ui;max-width:46rem;margin:2rem auto;padding:0 1rem}pre{background:#f4f4f4;padding:.5rem;overflow:auto}</style>
</head><body>
<h1>Your app</h1>
<p>Link an account at the Hitch Reference Shop: Hitch in production hands the login to the reference connector, which signs in on the shop in Chromium.</p>
<form id="f"><label>User <input name="user" value="user-1"></label>
<label>Product <select name="type"><option>transaction_link</option><option>card_switcher</option><option>vault</option></select></label>
<button>Link an account</button></form>
<h2>Webhooks received</h2>
<pre>{{range .}}{{.}}
{{else}}None yet.{{end}}</pre>
<script>
document.getElementById('f').addEventListener('submit', async function (e) {
  e.preventDefault();
  const body = new URLSearchParams(new FormData(e.target));
  const s = await (await fetch('/try/session', {method: 'POST', body})).json();
  new HitchLink().open({sessionId: s.session, clientId: s.client_id, environment: 'production', merchantIds: [114],
    onSuccess: function () { setTimeout(function () { location.reload(); }, 1500); }});
});
</script></body></html>`))

func (a *tryApp) page(w http.ResponseWriter, _ *http.Request) {
	a.mu.Lock()
	events := append([]string(nil), a.events...)
	a.mu.Unlock()
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_ = tryPage.Execute(w, events)
}

func (a *tryApp) session(w http.ResponseWriter, r *http.Request) {
	req := &client.CreateSessionRequest{Type: r.FormValue("type"), ExternalUserID: r.FormValue("user")}
	if req.Type == "card_switcher" {
		cardID := "card-1"
		req.CardID = &cardID
	}
	s, err := a.api.CreateSession(r.Context(), req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]string{"session": s.Session, "client_id": a.creds.ClientID})
}

func (a *tryApp) webhook(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err := client.VerifyWebhook(r.Header, body, a.creds.WebhookSecret, 5*time.Minute); err != nil {
		http.Error(w, "bad signature", http.StatusBadRequest)
		return
	}
	var ev struct {
		Event          string `json:"event"`
		ExternalUserID string `json:"external_user_id"`
	}
	_ = json.Unmarshal(body, &ev)
	a.mu.Lock()
	a.events = append(a.events, time.Now().Format(time.TimeOnly)+" "+ev.Event+" "+ev.ExternalUserID+" (signature verified)")
	a.mu.Unlock()
	w.WriteHeader(http.StatusOK)
}

func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
