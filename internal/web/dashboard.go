package web

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"errors"
	"fmt"
	"html/template"
	"log/slog"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/hitchdev/hitch/internal/account"
	"github.com/hitchdev/hitch/internal/audit"
	"github.com/hitchdev/hitch/internal/clientip"
	"github.com/hitchdev/hitch/internal/developer"
	"github.com/hitchdev/hitch/internal/field"
	"github.com/hitchdev/hitch/internal/link"
	"github.com/hitchdev/hitch/internal/member"
	"github.com/hitchdev/hitch/internal/ratelimit"
	"github.com/hitchdev/hitch/internal/store"
	"github.com/hitchdev/hitch/internal/webhook"
)

//go:embed templates/dashboard/*.html
var dashboardFS embed.FS

// The dashboard has no script at all; its forms post to itself only.
const cspDashboard = "default-src 'none'; script-src 'none'; style-src 'self'; img-src 'self'; " +
	"form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

// Dashboard is what the dashboard at /dashboard is built from.
type Dashboard struct {
	Members    *member.Service
	Audit      *audit.Log
	Store      store.Store
	Developers *developer.Service
	Webhooks   *webhook.Service
	Links      *link.Service
	// SecureCookies marks the cookies Secure and gives them the __Host-
	// prefix: set when the public URL is https.
	SecureCookies bool
	// SecretGrace is how long a rotated-out API secret keeps working.
	SecretGrace time.Duration
	// RequestLog is set when the deployment keeps a request log
	// (--request-log-retention above 0): the overview counts its requests,
	// and the log's page says how many it left out.
	RequestLog RequestLogWriter
}

// RequestLogWriter is what the dashboard asks of the request log's writer
// (reqlog.Writer).
type RequestLogWriter interface {
	// Dropped is how many of a developer's requests the log left out since
	// the server started.
	Dropped(clientID string) int64
}

// dashboard serves the pages of /dashboard.
type dashboard struct {
	Dashboard
	cfg   *Config
	log   *slog.Logger
	pages map[string]*template.Template
	asset func(string) (string, error)
	// signins bounds sign-in posts per client IP: each may cost up to
	// member.MaxSignInMembers password checks.
	signins *ratelimit.Limiter
	// origin refuses cross-origin form posts (Sec-Fetch-Site, Origin):
	// the first CSRF defence; the token tied to the sign-in is the second.
	origin *http.CrossOriginProtection
}

// Cookie names: with the __Host- prefix when Secure, which browsers then
// refuse to let any other path or subdomain set.
func (d *dashboard) cookieName(base string) string {
	if d.SecureCookies {
		return "__Host-" + base
	}
	return base
}

const (
	sessionCookie = "hitch_dashboard"
	signinCookie  = "hitch_signin"
	signinPath    = "/dashboard/signin"
	// passwordPath is where a member changes their password, and where one
	// who must is sent from every other page.
	passwordPath = "/dashboard/password"
)

var dashboardPages = []string{"signin", "password", "overview", "credentials", "members", "webhooks", "event", "users",
	"user", "merchants", "error", "audit", "endpoint", "link",
	"health_webhooks", "health_accounts", "timeline"}

func (h *Handler) mountDashboard(cfg *Config) error {
	d := &dashboard{Dashboard: *cfg.Dashboard, cfg: cfg, log: cfg.Logger, pages: map[string]*template.Template{},
		asset: h.assetURL, origin: http.NewCrossOriginProtection(),
		signins: ratelimit.New(signinRate, signinBurst, time.Now)}
	d.origin.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d.renderError(w, r, nil, http.StatusForbidden, "This form was sent from another site and was refused.")
	}))
	funcs := template.FuncMap{"asset": h.assetURL, "shortTime": shortTime, "can": can, "sameWords": sameWords}
	base, err := template.New("").Funcs(funcs).ParseFS(dashboardFS, "templates/dashboard/layout.html",
		"templates/dashboard/chart.html")
	if err != nil {
		return fmt.Errorf("web: dashboard layout: %w", err)
	}
	for _, name := range dashboardPages {
		t, err := template.Must(base.Clone()).ParseFS(dashboardFS, "templates/dashboard/"+name+".html")
		if err != nil {
			return fmt.Errorf("web: dashboard page %s: %w", name, err)
		}
		d.pages[name] = t
	}
	handle := func(pattern string, fn http.HandlerFunc) {
		h.handle(pattern, func(w http.ResponseWriter, r *http.Request) { d.origin.Handler(fn).ServeHTTP(w, r) })
	}
	handle("GET /dashboard", d.authed(d.overview))
	handle("GET /dashboard/signin", d.signinPage)
	handle("POST /dashboard/signin", d.signin)
	handle("POST /dashboard/signout", d.authedMayChangePassword(d.signout))
	handle("GET "+passwordPath, d.authedMayChangePassword(d.passwordPage))
	handle("POST "+passwordPath, d.authedMayChangePassword(d.changePassword))
	handle("GET /dashboard/credentials", d.authed(d.credentials))
	handle("POST /dashboard/credentials/reveal", d.authed(d.revealSecret))
	handle("POST /dashboard/credentials/rotate", d.authed(d.rotateSecret))
	handle("GET /dashboard/members", d.authed(d.members))
	handle("POST /dashboard/members", d.authed(d.addMember))
	handle("POST /dashboard/members/{id}/role", d.authed(d.setRole))
	handle("POST /dashboard/members/{id}/remove", d.authed(d.removeMember))
	handle("GET /dashboard/webhooks", d.authed(d.webhooks))
	handle("POST /dashboard/webhooks", d.authed(d.addEndpoint))
	handle("POST /dashboard/webhooks/test", d.authed(d.testWebhook))
	handle("POST /dashboard/webhooks/{id}/remove", d.authed(d.removeEndpoint))
	handle("POST /dashboard/webhooks/{id}/rotate", d.authed(d.rotateEndpoint))
	handle("GET /dashboard/webhooks/endpoints/{id}", d.authed(d.endpoint))
	handle("POST /dashboard/webhooks/{id}/edit", d.authed(d.editEndpoint))
	handle("GET /dashboard/webhooks/events/{id}", d.authed(d.eventPage))
	handle("POST /dashboard/webhooks/events/{id}/resend", d.authed(d.resendEvent))
	handle("GET /dashboard/users", d.authed(d.users))
	handle("GET /dashboard/user", d.authed(d.user))
	handle("GET /dashboard/merchants", d.authed(d.merchants))
	handle("POST /dashboard/merchants/{id}/hide", d.authed(d.hideMerchant))
	handle("POST /dashboard/merchants/{id}/show", d.authed(d.showMerchant))
	handle("GET /dashboard/audit", d.authed(d.auditLog))
	handle("GET "+linkSettingsPath, d.authed(d.linkSettings))
	handle("POST "+linkSettingsPath+"/origins", d.authed(d.setLinkOrigins))
	d.mountHealth(handle)
	if err := d.mountRequestLog(base, handle); err != nil {
		return err
	}
	return nil
}

func can(p *member.Principal, what string) bool {
	switch what {
	case "webhooks":
		return p.Can(member.ManageWebhooks)
	case "admin":
		return p.Can(member.Administer)
	}
	return false
}

// sameWords reports whether two labels say the same, whatever their case
// and surrounding space: the header shows a developer named after its
// environment ("Development") once, as the environment's badge.
func sameWords(a, b string) bool {
	return strings.EqualFold(strings.TrimSpace(a), strings.TrimSpace(b))
}

func shortTime(t any) string {
	switch v := t.(type) {
	case time.Time:
		return v.UTC().Format("2006-01-02 15:04:05 UTC")
	case *time.Time:
		if v == nil {
			return ""
		}
		return v.UTC().Format("2006-01-02 15:04:05 UTC")
	}
	return ""
}

// view is what every dashboard page renders.
type view struct {
	Title  string
	Active string
	P      *member.Principal
	CSRF   string
	Notice string
	Error  string
	// Shown is a value shown this once (a new password or secret).
	Shown *shown
	Data  any
}

type shown struct {
	Label string
	Value string
	Note  string
}

// action is a dashboard handler. It returns an error to show instead of the
// page; pageError carries a status and a message fit for the member.
type action func(w http.ResponseWriter, r *http.Request, p *member.Principal) error

type pageError struct {
	status  int
	message string
}

func (e *pageError) Error() string { return e.message }

func forbidden() error {
	return &pageError{http.StatusForbidden, "Your role does not allow this. Ask an admin of your team."}
}

// authed runs an action for a signed-in member; a form post must also
// carry the sign-in's CSRF token. A member who must change their password
// (someone else chose it) is sent to do that first, and nothing is done.
func (d *dashboard) authed(fn action) http.HandlerFunc { return d.signedIn(fn, false) }

// authedMayChangePassword is authed for the pages a member who must change
// their password may use: that page, and signing out.
func (d *dashboard) authedMayChangePassword(fn action) http.HandlerFunc { return d.signedIn(fn, true) }

func (d *dashboard) signedIn(fn action, changingPassword bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var p *member.Principal
		c, err := r.Cookie(d.cookieName(sessionCookie))
		if err == nil {
			p, err = d.Members.Authenticate(r.Context(), c.Value)
		}
		if err != nil {
			if !errors.Is(err, member.ErrSessionEnded) && !errors.Is(err, http.ErrNoCookie) {
				pe := d.failure(r.Context(), "dashboard: authenticate", err)
				d.renderError(w, r, nil, pe.status, pe.message)
				return
			}
			d.clearCookie(w, sessionCookie)
			target := signinPath
			if r.Method == http.MethodGet && r.URL.Path != "/dashboard" {
				target += "?next=" + url.QueryEscape(r.URL.RequestURI())
			}
			http.Redirect(w, r, target, http.StatusSeeOther)
			return
		}
		if r.Method == http.MethodPost && !hmac.Equal([]byte(r.PostFormValue("csrf")), []byte(csrfToken(p.Token))) {
			d.renderError(w, r, p, http.StatusForbidden, "This form has expired. Reload the page and try again.")
			return
		}
		if p.Member.MustChangePassword && !changingPassword {
			http.Redirect(w, r, passwordPath, http.StatusSeeOther)
			return
		}
		if err := fn(w, r, p); err != nil {
			var pe *pageError
			if !errors.As(err, &pe) {
				pe = d.domainError(r.Context(), err)
			}
			d.renderError(w, r, p, pe.status, pe.message)
		}
	}
}

// domainError maps the domain packages' errors to what the page says.
func (d *dashboard) domainError(ctx context.Context, err error) *pageError {
	var invalid *field.Error
	switch {
	case errors.Is(err, member.ErrForbidden):
		return forbidden().(*pageError)
	case errors.Is(err, member.ErrLastAdmin):
		return &pageError{http.StatusConflict, "Your team must keep at least one admin."}
	case errors.Is(err, member.ErrExists):
		return &pageError{http.StatusConflict, "That e-mail address belongs to a member of your team already."}
	case errors.Is(err, member.ErrNotFound):
		return &pageError{http.StatusNotFound, "There is no such member in your team."}
	case errors.As(err, &invalid):
		return &pageError{http.StatusBadRequest, "The " + invalid.Error() + "."}
	case errors.Is(err, webhook.ErrNotFound):
		return &pageError{http.StatusNotFound, "There is no such webhook endpoint."}
	case errors.Is(err, webhook.ErrEventNotFound):
		return &pageError{http.StatusNotFound, "There is no such event."}
	case errors.Is(err, webhook.ErrTooManyEndpoints):
		return &pageError{http.StatusConflict, "You have as many endpoints as allowed; remove one first."}
	case errors.Is(err, account.ErrUnknownMerchant):
		return &pageError{http.StatusNotFound, "There is no such merchant."}
	case errors.Is(err, store.ErrInvalidText):
		return &pageError{http.StatusBadRequest, "A value you sent must be valid UTF-8 text without NUL characters."}
	}
	return d.failure(ctx, "dashboard", err)
}

// failure is the page of an error no page explains: 503 while the
// database is unavailable; nothing logged as a fault when the client went
// away (the access log says 499); else a 500 whose cause is logged.
func (d *dashboard) failure(ctx context.Context, what string, err error) *pageError {
	switch {
	case errors.Is(ctx.Err(), context.Canceled):
		d.log.DebugContext(ctx, what+": client went away", "error", err)
	case errors.Is(err, store.ErrUnavailable):
		d.log.WarnContext(ctx, "database unavailable", "error", err)
		return &pageError{http.StatusServiceUnavailable, "The database is unavailable for now. Try again in a few seconds."}
	default:
		d.log.ErrorContext(ctx, what, "error", err)
	}
	return &pageError{http.StatusInternalServerError, "Something went wrong. Try again."}
}

// csrfToken is the form token of a sign-in: an HMAC of a fixed label keyed
// with the sign-in's cookie value, so it changes with every sign-in and
// cannot be computed without the cookie, and nothing more is stored.
func csrfToken(sessionToken string) string {
	m := hmac.New(sha256.New, []byte(sessionToken))
	m.Write([]byte("hitch dashboard csrf v1"))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// Cookies are SameSite=Strict: no request from another site carries the
// sign-in, not even a top-level link (the member then signs in again).
func (d *dashboard) setCookie(w http.ResponseWriter, name, value string, maxAge time.Duration) {
	http.SetCookie(w, &http.Cookie{Name: d.cookieName(name), Value: value, Path: "/", MaxAge: int(maxAge.Seconds()),
		HttpOnly: true, Secure: d.SecureCookies, SameSite: http.SameSiteStrictMode})
}

func (d *dashboard) clearCookie(w http.ResponseWriter, name string) {
	http.SetCookie(w, &http.Cookie{Name: d.cookieName(name), Value: "", Path: "/", MaxAge: -1,
		HttpOnly: true, Secure: d.SecureCookies, SameSite: http.SameSiteStrictMode})
}

// refuseOtherSites refuses an audited GET that another site (or a sibling
// subdomain) sent the browser to, so that a link elsewhere cannot write
// records in the member's name. The session cookie is SameSite=Strict
// too; this covers browsers that send it anyway. Typed URLs and bookmarks
// (none) and the dashboard's own links (same-origin) pass, as do clients
// that send no Sec-Fetch-Site.
func refuseOtherSites(r *http.Request) error {
	switch r.Header.Get("Sec-Fetch-Site") {
	case "cross-site", "same-site":
		return &pageError{http.StatusForbidden,
			"This page was opened from another site, so it was not shown. Open it from the dashboard itself."}
	}
	return nil
}

// origin is where a request came from, for the audit log and the sign-in
// limit: behind trusted proxies, the client X-Forwarded-For names.
func origin(r *http.Request) audit.Origin {
	return audit.Origin{IP: clientIP(r), UserAgent: r.UserAgent()}
}

// render writes a page.
func (d *dashboard) render(w http.ResponseWriter, r *http.Request, status int, page string, v *view) {
	if v.P != nil {
		v.CSRF = csrfToken(v.P.Token)
	}
	t := d.pages[page]
	b, err := renderTemplate(t, "layout", v)
	if err != nil {
		d.log.ErrorContext(r.Context(), "dashboard: render", "page", page, "error", err)
		http.Error(w, "The page could not be rendered.", http.StatusInternalServerError)
		return
	}
	pageHeaders(w, cspDashboard)
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

func (d *dashboard) renderError(w http.ResponseWriter, r *http.Request, p *member.Principal, status int, message string) {
	if status == http.StatusServiceUnavailable && w.Header().Get("Retry-After") == "" {
		w.Header().Set("Retry-After", "5")
	}
	d.render(w, r, status, "error", &view{Title: http.StatusText(status), P: p, Error: message})
}

// redirect answers a form post that showed nothing once with a redirect
// to the page and its notice (Post/Redirect/Get: reloading repeats
// nothing).
func redirect(w http.ResponseWriter, r *http.Request, path, notice string) error {
	if notice != "" {
		path += "?notice=" + url.QueryEscape(notice)
	}
	http.Redirect(w, r, path, http.StatusSeeOther)
	return nil
}

// notices are the messages a redirect may ask for; the query names one, so
// no text of the URL is ever shown.
var notices = map[string]string{
	"password.changed": "Your password was changed. Your other sign-ins were ended.",

	"member.removed":  "The member was removed.",
	"member.role":     "The member's role was changed.",
	"webhook.removed": "The endpoint was removed.",
	"webhook.tested":  "A TEST event was sent to every enabled endpoint.",
	"event.resent":    "The event was queued for delivery again.",
	"merchant.hidden": "The merchant is hidden from your users in the link flow.",
	"merchant.shown":  "The merchant is shown to your users in the link flow again.",

	"webhook.updated":   "The endpoint was changed.",
	"event.resent.one":  "The event was queued for delivery to that endpoint again.",
	"event.resent.none": "Nothing was queued: no enabled endpoint takes this event.",

	"events.replayed":      "The range's events were queued to the endpoint again.",
	"events.replayed.none": "Nothing was queued: the endpoint takes no event of that range.",
}

func notice(r *http.Request) string { return notices[r.URL.Query().Get("notice")] }

// Sign-in

type signinData struct {
	Email string
	Token string
	Next  string
	// ClientID signs in to that developer's member only (a choice made
	// among Choices, or a link's).
	ClientID string
	// Choices are the developers whose members the e-mail and password
	// both are, to pick one from.
	Choices []*store.Client
}

// safeNext keeps a post-sign-in destination only when it is a dashboard
// path of this site, and returns it cleaned: the path a browser will follow
// is the one checked. A backslash (which browsers read as a slash), a
// scheme, a host, or an encoded slash or backslash (which a proxy may
// decode) sends the member to the overview instead.
func safeNext(next string) string {
	const overview = "/dashboard"
	u, err := url.Parse(next)
	if err != nil || len(next) > 512 || u.Scheme != "" || u.Host != "" || u.User != nil || u.Opaque != "" ||
		strings.Contains(next, `\`) || !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") {
		return overview
	}
	if raw := strings.ToLower(u.EscapedPath()); strings.Contains(raw, "%2f") || strings.Contains(raw, "%5c") {
		return overview
	}
	clean := path.Clean(u.Path)
	if clean != overview && !strings.HasPrefix(clean, overview+"/") {
		return overview
	}
	return (&url.URL{Path: clean, RawQuery: u.RawQuery}).String()
}

func (d *dashboard) signinPage(w http.ResponseWriter, r *http.Request) {
	d.renderSignin(w, r, http.StatusOK, signinData{ClientID: r.URL.Query().Get("client_id")}, "")
}

// renderSignin shows the form with a fresh double-submit token: the
// sign-in form has no session to tie a token to, so its token sits in a
// cookie and in the form, and the two must agree.
func (d *dashboard) renderSignin(w http.ResponseWriter, r *http.Request, status int, data signinData, message string) {
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	data.Token = base64.RawURLEncoding.EncodeToString(b)
	data.Next = safeNext(r.FormValue("next"))
	if len(data.ClientID) > 100 {
		data.ClientID = ""
	}
	d.setCookie(w, signinCookie, data.Token, time.Hour)
	d.render(w, r, status, "signin", &view{Title: "Sign in", Active: "signin", Error: message, Data: data})
}

func (d *dashboard) signin(w http.ResponseWriter, r *http.Request) {
	if ok, retry := d.signins.Allow(clientip.LimitKey(clientIP(r))); !ok {
		w.Header().Set("Retry-After", strconv.Itoa(retry))
		d.renderSignin(w, r, http.StatusTooManyRequests, signinData{},
			"Too many sign-in attempts from your network. Wait a few seconds and try again.")
		return
	}
	c, err := r.Cookie(d.cookieName(signinCookie))
	if err != nil || c.Value == "" || !hmac.Equal([]byte(c.Value), []byte(r.PostFormValue("csrf"))) {
		d.renderSignin(w, r, http.StatusForbidden, signinData{}, "This form has expired. Try again.")
		return
	}
	email, clientID := r.PostFormValue("email"), r.PostFormValue("client_id")
	signed, err := d.Members.SignInTo(r.Context(), clientID, email, r.PostFormValue("password"), origin(r))
	var choose *member.ChooseError
	switch {
	case errors.Is(err, member.ErrInvalidCredentials):
		// The refused form forgets the client_id: the next try considers
		// every member of the e-mail again.
		d.renderSignin(w, r, http.StatusUnauthorized, signinData{Email: email},
			"The e-mail or password is wrong, or the account is locked for a while after repeated failures.")
		return
	case errors.Is(err, member.ErrBusy):
		w.Header().Set("Retry-After", "1")
		d.renderSignin(w, r, http.StatusServiceUnavailable, signinData{Email: email, ClientID: clientID},
			"Too many people are signing in right now. Try again in a moment.")
		return
	case errors.As(err, &choose):
		d.renderSignin(w, r, http.StatusOK, signinData{Email: email, Choices: choose.Clients}, "")
		return
	case errors.Is(err, store.ErrInvalidText):
		d.renderSignin(w, r, http.StatusBadRequest, signinData{}, "A value you sent must be valid UTF-8 text without NUL characters.")
		return
	case err != nil:
		pe := d.failure(r.Context(), "dashboard: sign in", err)
		if pe.status == http.StatusServiceUnavailable {
			w.Header().Set("Retry-After", "5")
		}
		d.renderSignin(w, r, pe.status, signinData{Email: email}, pe.message)
		return
	}
	d.clearCookie(w, signinCookie)
	d.setCookie(w, sessionCookie, signed.Token, d.Members.SessionLifetime())
	http.Redirect(w, r, safeNext(r.PostFormValue("next")), http.StatusSeeOther)
}

func (d *dashboard) signout(w http.ResponseWriter, r *http.Request, p *member.Principal) error {
	if err := d.Members.SignOut(r.Context(), p, origin(r)); err != nil {
		return err
	}
	d.clearCookie(w, sessionCookie)
	http.Redirect(w, r, signinPath, http.StatusSeeOther)
	return nil
}

// Sign-in posts per client IP, on this node: a burst of signinBurst, then
// signinRate a second. A post may cost member.MaxSignInMembers password
// checks (one per member of the e-mail), so the rate is what keeps an IP
// within signinChecksPerSecond. Every post is charged alike, what it may
// cost and not what it cost: charging the checks made would tell the
// sender, by when the 429s begin, how many developers' members an e-mail
// is, which the refusal's time does not. Behind a proxy every client
// shares its address, as with the API's limits.
const (
	signinChecksPerSecond = 2.0
	signinRate            = signinChecksPerSecond / member.MaxSignInMembers
	signinBurst           = 20
)
