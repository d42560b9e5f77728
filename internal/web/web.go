// Package web serves Hitch's pages: the hosted link flow at /link (which
// the web SDK opens in an iframe; at / too, for knotapi-js), the SDK script
// at /sdk/hitch.js, a landing page at /, the docs at /docs/ and, in
// development, the demo at /demo. Pages are Go templates and a little plain
// JavaScript, all embedded: there is no build step.
//
// The pages never put a session value in a URL: the SDK posts it to the
// flow's iframe, and the flow's script sends it only in the bodies of the
// API's /link/api/* calls (internal/api). The iframe's URL names the
// developer (client_id, which is no secret), so that /link can be served
// with the frame-ancestors of that developer's allowed origins.
package web

import (
	"bytes"
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"mime"
	"net/http"
	"net/netip"
	"path"
	"strings"

	"github.com/hitchdev/hitch/internal/clientip"
	"github.com/hitchdev/hitch/internal/link"
	"github.com/hitchdev/hitch/internal/merchant"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static sdk
var assetFS embed.FS

// Content security policies. No inline script or style anywhere; scripts,
// styles, images and calls are same-origin only.
const (
	cspBase = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
		"form-action 'none'; base-uri 'none'"
	// The flow is embedded by developers' sites: linkPolicy adds the
	// frame-ancestors of the developer its URL names (docs/link.md).
	cspLink = cspBase
	// The demo frames the flow and is framed by nobody.
	cspDemo = cspBase + "; frame-src 'self'; frame-ancestors 'none'"
)

// Config is what the pages are built from.
type Config struct {
	// Environment is the deployment's: development or production.
	Environment string
	Catalog     *merchant.Catalog
	// Demo creates the sessions of the /demo page; nil (always in
	// production) leaves /demo unrouted.
	Demo *Demo
	// Dashboard builds the team dashboard at /dashboard; nil leaves it
	// unrouted.
	Dashboard *Dashboard
	Logger    *slog.Logger
	// PublicURL is the deployment's public base URL (HITCH_PUBLIC_URL).
	// The demo answers only requests addressed to its host or to a
	// loopback name; empty allows loopback names only.
	PublicURL string
	// TrustedProxies are the reverse proxies whose X-Forwarded-For names
	// the client of the dashboard's sign-in limit and audit records
	// (--trusted-proxies). Default none: the client is the connection's peer.
	TrustedProxies []netip.Prefix
	// Links gives /link the frame-ancestors of the developer its URL names
	// (its allowed origins). nil uses Dashboard.Links, where the origins
	// are managed; with neither, every flow gets the environment's default.
	Links *link.Service
	// Docs holds the project's Markdown documents (docs/*.md), served at
	// /docs/{file} and listed on the landing page; nil serves none.
	Docs fs.FS
}

// Handler serves the pages. Its patterns (Routes) are mounted on the API's
// mux, outside the API's route table.
type Handler struct {
	cfg       Config
	mux       *http.ServeMux
	patterns  []string
	templates *template.Template
	assets    map[string]*asset
	// linkPage is the rendered flow: it depends on nothing but the catalog
	// (and the strings table).
	linkPage []byte
	linkText linkStrings
	links    *link.Service
	// landingPage is the rendered page of GET / (landing.go).
	landingPage []byte
	docs        map[string]*asset
}

// asset is an embedded file as served.
type asset struct {
	body        []byte
	contentType string
	etag        string
	// version is a prefix of the content hash, for cache-busting URLs.
	version string
}

// New builds the pages and their routes.
func New(cfg Config) (*Handler, error) {
	h := &Handler{cfg: cfg, mux: http.NewServeMux(), assets: map[string]*asset{}, links: cfg.Links, docs: map[string]*asset{}}
	if h.links == nil && cfg.Dashboard != nil {
		h.links = cfg.Dashboard.Links
	}
	var err error
	if h.linkText, err = loadLinkStrings(); err != nil {
		return nil, err
	}
	err = fs.WalkDir(assetFS, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := assetFS.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		h.assets[p] = &asset{body: b, contentType: mime.TypeByExtension(path.Ext(p)),
			etag: `"` + hex.EncodeToString(sum[:16]) + `"`, version: hex.EncodeToString(sum[:6])}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("web: assets: %w", err)
	}
	h.templates, err = template.New("").Funcs(template.FuncMap{"asset": h.assetURL, "t": h.linkText.text}).
		ParseFS(templateFS, "templates/*.html")
	if err != nil {
		return nil, fmt.Errorf("web: templates: %w", err)
	}
	data := h.linkData()
	if data.Strings, err = h.linkText.json(); err != nil {
		return nil, err
	}
	if h.linkPage, err = h.render("link.html", data); err != nil {
		return nil, err
	}
	docs, err := h.loadDocs(cfg.Docs)
	if err != nil {
		return nil, err
	}
	demo := cfg.Demo != nil && cfg.Environment == "development"
	if h.landingPage, err = h.render("landing.html", landingData{Development: cfg.Environment == "development",
		Demo: demo, Dashboard: cfg.Dashboard != nil, Docs: docs}); err != nil {
		return nil, err
	}
	h.handle("GET /{$}", h.root)
	h.handle("GET /link", h.link)
	h.handle("GET /static/{file}", h.static)
	h.handle("GET /sdk/hitch.js", h.sdk)
	if len(docs) > 0 {
		h.handle("GET /docs/{file}", h.docFile)
	}
	if demo {
		h.handle("GET /demo", h.demoHost(h.demo))
		h.handle("POST /demo/session", h.demoHost(h.demoSession))
		if cfg.Demo.Cards != nil {
			h.handle("POST /demo/card", h.demoHost(h.demoCard))
		}
	}
	if cfg.Dashboard != nil {
		if err := h.mountDashboard(&h.cfg); err != nil {
			return nil, err
		}
	}
	return h, nil
}

func (h *Handler) handle(pattern string, fn http.HandlerFunc) {
	h.mux.HandleFunc(pattern, fn)
	h.patterns = append(h.patterns, pattern)
}

// Routes lists the "METHOD /path" patterns the pages serve.
func (h *Handler) Routes() []string { return append([]string(nil), h.patterns...) }

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Content-Type-Options", "nosniff")
	ip := clientip.FromRequest(r, h.cfg.TrustedProxies)
	h.mux.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), clientIPKey{}, ip)))
}

// clientIPKey holds the request's client address, resolved once by
// ServeHTTP, which has the trusted proxies.
type clientIPKey struct{}

// clientIP is the client address of a request served by ServeHTTP; of any
// other, its peer's (no proxy trusted).
func clientIP(r *http.Request) string {
	if ip, ok := r.Context().Value(clientIPKey{}).(string); ok {
		return ip
	}
	return clientip.FromRequest(r, nil)
}

// assetURL is the versioned URL of an embedded file, e.g. "static/link.js".
func (h *Handler) assetURL(name string) (string, error) {
	a, ok := h.assets[name]
	if !ok {
		return "", fmt.Errorf("web: no asset %q", name)
	}
	return "/" + name + "?v=" + a.version, nil
}

func (h *Handler) render(name string, data any) ([]byte, error) {
	return renderTemplate(h.templates, name, data)
}

func renderTemplate(t *template.Template, name string, data any) ([]byte, error) {
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, name, data); err != nil {
		return nil, fmt.Errorf("web: render %s: %w", name, err)
	}
	return buf.Bytes(), nil
}

// pageHeaders are the headers of every HTML page.
func pageHeaders(w http.ResponseWriter, csp string) {
	hd := w.Header()
	hd.Set("Content-Type", "text/html; charset=utf-8")
	hd.Set("Content-Security-Policy", csp)
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("Cache-Control", "no-store")
	hd.Set("Permissions-Policy", "camera=(), microphone=(), geolocation=(), payment=(), usb=()")
}

type merchantItem struct {
	ID       int64
	Name     string
	Category string
	Label    string
	Logo     string
}

type categoryItem struct {
	Key   string
	Label string
}

type linkData struct {
	Development bool
	Categories  []categoryItem
	Merchants   []merchantItem
	TestLogins  []testLogin
	// Strings is the flow's strings table as JSON, for link.js.
	Strings string
}

// linkData renders the whole catalog once; the flow's script shows the
// merchants of the session's product and search.
func (h *Handler) linkData() linkData {
	d := linkData{Development: h.cfg.Environment == "development", TestLogins: testLogins}
	for _, c := range h.cfg.Catalog.Categories() {
		d.Categories = append(d.Categories, categoryItem{Key: c, Label: categoryLabel(c)})
	}
	for _, m := range h.cfg.Catalog.List("", "") {
		d.Merchants = append(d.Merchants, merchantItem{ID: m.ID, Name: m.Name, Category: m.Category,
			Label: categoryLabel(m.Category), Logo: merchant.LogoPath(m.ID)})
	}
	return d
}

// categoryLabel turns "food_delivery" into "Food delivery".
func categoryLabel(c string) string {
	s := strings.ReplaceAll(c, "_", " ")
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// link serves the hosted flow. The page is the same for everyone: the
// session arrives later, by postMessage. Only its policy depends on the
// developer the URL names.
func (h *Handler) link(w http.ResponseWriter, r *http.Request) {
	pageHeaders(w, h.linkPolicy(r))
	_, _ = w.Write(h.linkPage)
}

// linkPolicy is the flow's policy with the frame-ancestors of the
// developer its client_id names: Hitch and the developer's allowed
// origins, or the environment's default (link.FrameAncestorsFor). The flow
// itself refuses an init of another developer (link.js), so that the
// origins of one never frame the sessions of another.
func (h *Handler) linkPolicy(r *http.Request) string {
	clientID := r.URL.Query().Get("client_id")
	ancestors := link.FrameAncestorsFor(h.cfg.Environment, nil)
	if h.links != nil {
		var err error
		if ancestors, err = h.links.FrameAncestors(r.Context(), clientID); err != nil {
			// Closed rather than open: the embed fails this once. A
			// visitor who left is no error of Hitch's.
			if r.Context().Err() == nil {
				h.cfg.Logger.ErrorContext(r.Context(), "link: frame ancestors", "error", err)
			}
			ancestors = "'self'"
		}
	}
	return cspLink + "; frame-ancestors " + ancestors
}

// static serves the flow's and the demo's scripts and styles.
func (h *Handler) static(w http.ResponseWriter, r *http.Request) {
	a, ok := h.assets["static/"+r.PathValue("file")]
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Cache-Control", "no-cache")
	h.serveAsset(w, r, a)
}

// sdk serves the web SDK, which developers' pages of any origin load.
func (h *Handler) sdk(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	hd.Set("Cache-Control", "public, max-age=300")
	hd.Set("Access-Control-Allow-Origin", "*")
	hd.Set("Cross-Origin-Resource-Policy", "cross-origin")
	h.serveAsset(w, r, h.assets["sdk/hitch.js"])
}

func (h *Handler) serveAsset(w http.ResponseWriter, r *http.Request, a *asset) {
	w.Header().Set("Content-Type", a.contentType)
	w.Header().Set("ETag", a.etag)
	if r.Header.Get("If-None-Match") == a.etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	_, _ = w.Write(a.body)
}
