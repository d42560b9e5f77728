// Package refshop is the Hitch Reference Shop: a merchant website made like
// a real one, for the reference connector and end-to-end tests to drive with
// a real browser. Pages are server-rendered HTML with a little JavaScript;
// the sign-in form carries a proof that a script on the page computes, so a
// plain HTTP client cannot sign in. The store is in memory and seeded
// deterministically: the same Config.Now gives the same data.
//
// Demo users, all with the password correct-horse-battery:
//
//	ada@refshop.example     no second factor; 25 orders, Shop Plus, Visa 4242 (default) and Mastercard 4444
//	otp@refshop.example     a code by e-mail (read it at /mailbox?to=otp@refshop.example); 12 orders
//	quiz@refshop.example    security question "What was the name of your first pet?", answer Rex; 5 orders
//	empty@refshop.example   no orders, subscriptions or cards
//	locked@refshop.example  locked: sign-in answers "Your account is locked."
//
// Tests create more users and orders, change statuses and passwords, and
// turn on faults through the admin API under /admin/api (see README.md).
package refshop

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"embed"
	"encoding/base64"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"
)

// Config configures a Shop.
type Config struct {
	// AdminToken is required for /admin and /admin/api; empty turns the
	// admin off.
	AdminToken string
	// Now is the clock. Default time.Now.
	Now func() time.Time
	// SessionTTL is how long a session lives without a request. Default 24h.
	SessionTTL time.Duration
	// Log receives the shop's logs. Default: discarded.
	Log *slog.Logger
}

// Shop is the reference merchant website, an http.Handler.
type Shop struct {
	cfg    Config
	log    *slog.Logger
	mux    *http.ServeMux
	pages  map[string]pageTemplate
	static http.Handler

	mu         sync.Mutex
	users      map[string]*account // by lower-case e-mail
	orderOwner map[string]*account // by order number
	pre        map[string]*preSession
	sessions   map[string]*session
	admins     map[string]string // admin session id → its CSRF token
	mail       map[string][]message
	faults     Faults
	nextID     int
}

// Faults are the failures the shop injects, as real sites have them.
type Faults struct {
	// OrdersFailRate is the share of order pages answering 503, 0 to 1.
	OrdersFailRate float64 `json:"orders_fail_rate"`
	// LatencyMS is added to every page that is not admin or static.
	LatencyMS int `json:"latency_ms"`
}

// account is a user with what the shop keeps but never shows.
type account struct {
	User
	salt, pwHash []byte
	answer       string
	extraOrders  int // orders generated after creation, for distinct seeds
}

type session struct {
	email    string
	csrf     string
	lastSeen time.Time
}

// preSession is the state of a browser before it signs in: its CSRF token,
// the js_proof challenge and a pending second factor.
type preSession struct {
	csrf        string
	nonce       string
	lastSeen    time.Time
	pending     string // e-mail that passed its password
	stage       string // "verify" or "question"
	code        string
	codeExpires time.Time
	attempts    int
	next        string
	flash       string
}

type message struct {
	To, Subject, Body string
	SentAt            time.Time
}

const (
	preCookie     = "rs_pre"
	sessionCookie = "rs_session"
	adminCookie   = "rs_admin"
	preTTL        = time.Hour
	codeTTL       = 10 * time.Minute
	maxAttempts   = 3
)

//go:embed templates/*.html static/*
var assets embed.FS

// New returns a shop seeded with the demo users.
func New(cfg Config) *Shop {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.SessionTTL <= 0 {
		cfg.SessionTTL = 24 * time.Hour
	}
	log := cfg.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	static, _ := fs.Sub(assets, "static")
	s := &Shop{
		cfg:        cfg,
		log:        log,
		pages:      parsePages(),
		static:     http.StripPrefix("/static/", http.FileServerFS(static)),
		users:      map[string]*account{},
		orderOwner: map[string]*account{},
		pre:        map[string]*preSession{},
		sessions:   map[string]*session{},
		admins:     map[string]string{},
		mail:       map[string][]message{},
	}
	s.seed()
	s.mux = s.routes()
	return s
}

func (s *Shop) routes() *http.ServeMux {
	m := http.NewServeMux()
	m.HandleFunc("GET /{$}", s.home)
	m.HandleFunc("GET /signin", s.signinPage)
	m.HandleFunc("POST /signin", s.signin)
	m.HandleFunc("GET /signin/verify", s.verifyPage)
	m.HandleFunc("POST /signin/verify", s.verify)
	m.HandleFunc("GET /signin/question", s.questionPage)
	m.HandleFunc("POST /signin/question", s.question)
	m.HandleFunc("GET /signin/forgot", s.forgotPage)
	m.HandleFunc("POST /signin/forgot", s.forgot)
	m.HandleFunc("POST /signout", s.signout)
	m.HandleFunc("GET /account", s.accountPage)
	m.HandleFunc("GET /orders", s.ordersPage)
	m.HandleFunc("GET /orders/{number}", s.orderPage)
	m.HandleFunc("GET /subscriptions", s.subscriptionsPage)
	m.HandleFunc("GET /wallet", s.walletPage)
	m.HandleFunc("POST /wallet/cards", s.addCard)
	m.HandleFunc("POST /wallet/cards/{id}/default", s.makeDefault)
	m.HandleFunc("GET /mailbox", s.mailboxPage)
	m.HandleFunc("GET /products/{sku}", s.productPage)
	m.HandleFunc("GET /images/{file}", s.productImage)
	m.Handle("GET /static/", s.static)

	m.HandleFunc("GET /admin", s.adminPage)
	m.HandleFunc("POST /admin/orders", s.adminPageCreateOrder)
	m.HandleFunc("POST /admin/status", s.adminPageStatus)
	m.Handle("GET /admin/api/users/{email}", s.api(s.apiGetUser))
	m.Handle("POST /admin/api/users", s.api(s.apiCreateUser))
	m.Handle("POST /admin/api/users/{email}/orders", s.api(s.apiCreateOrder))
	m.Handle("POST /admin/api/users/{email}/password", s.api(s.apiSetPassword))
	m.Handle("POST /admin/api/orders/{number}/status", s.api(s.apiSetStatus))
	m.Handle("GET /admin/api/faults", s.api(s.apiGetFaults))
	m.Handle("POST /admin/api/faults", s.api(s.apiSetFaults))
	m.Handle("/admin/api/", s.api(func(w http.ResponseWriter, r *http.Request) error {
		return apiErrorf(http.StatusNotFound, "no such admin endpoint")
	}))
	return m
}

// ServeHTTP serves the site.
func (s *Shop) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; script-src 'self'; style-src 'self'; form-action 'self'; frame-ancestors 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
	if !strings.HasPrefix(r.URL.Path, "/admin") && !strings.HasPrefix(r.URL.Path, "/static/") {
		h.Set("Cache-Control", "no-store")
		s.mu.Lock()
		latency := time.Duration(s.faults.LatencyMS) * time.Millisecond
		s.mu.Unlock()
		if latency > 0 {
			t := time.NewTimer(latency)
			select {
			case <-t.C:
			case <-r.Context().Done():
				t.Stop()
				return
			}
		}
	}
	s.mux.ServeHTTP(w, r)
}

// seed creates the demo users.
func (s *Shop) seed() {
	now := s.cfg.Now().UTC()
	const pw = "correct-horse-battery"
	demo := []newUser{
		{Email: "ada@refshop.example", Password: pw, Name: "Ada Lovelace", Phone: "+1 415 555 0100",
			TwoFactor: "none", Orders: 25, Subscriptions: true, CreatedAt: now.AddDate(-3, -2, 0),
			Cards: []Card{
				{Brand: "Visa", Last4: "4242", ExpMonth: 8, ExpYear: now.Year() + 3, Default: true},
				{Brand: "Mastercard", Last4: "4444", ExpMonth: 11, ExpYear: now.Year() + 2},
			}},
		{Email: "otp@refshop.example", Password: pw, Name: "Otto Pike", Phone: "+1 415 555 0101",
			TwoFactor: "email", Orders: 12, CreatedAt: now.AddDate(-2, -4, 0)},
		{Email: "quiz@refshop.example", Password: pw, Name: "Quinn Izard", Phone: "+1 415 555 0102",
			TwoFactor: "question", Question: "What was the name of your first pet?", Answer: "Rex",
			Orders: 5, CreatedAt: now.AddDate(-1, -5, 0)},
		{Email: "empty@refshop.example", Password: pw, Name: "Emma Tee", Phone: "+1 415 555 0103",
			TwoFactor: "none", CreatedAt: now.AddDate(0, -1, 0)},
		{Email: "locked@refshop.example", Password: pw, Name: "Lockie Down", Phone: "+1 415 555 0104",
			TwoFactor: "none", Orders: 3, Locked: true, CreatedAt: now.AddDate(-1, 0, 0)},
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, nu := range demo {
		if _, err := s.addUser(nu); err != nil {
			s.log.Error("refshop: seeding a demo user", "email", nu.Email, "error", err)
		}
	}
}

// newUser is what creating a user takes (the admin API and the seed).
type newUser struct {
	Email, Password, Name, Phone string
	TwoFactor, Question, Answer  string
	Orders                       int
	Subscriptions                bool
	family                       bool
	Locked                       bool
	CreatedAt                    time.Time
	Cards                        []Card
}

// addUser creates a user with its generated data; s.mu is held.
func (s *Shop) addUser(nu newUser) (*account, error) {
	email := normEmail(nu.Email)
	if _, ok := s.users[email]; ok {
		return nil, apiErrorf(http.StatusConflict, "a user with this e-mail exists")
	}
	now := s.cfg.Now().UTC()
	if nu.CreatedAt.IsZero() {
		nu.CreatedAt = now
	}
	if nu.Name == "" {
		nu.Name = nameFor(email)
	}
	a := &account{User: User{
		Email: email, Name: nu.Name, Phone: nu.Phone, TwoFactor: nu.TwoFactor, Question: nu.Question,
		CreatedAt: nu.CreatedAt.UTC().Truncate(time.Second), Locked: nu.Locked,
		ShippingAddress: addressFor(email, nu.Name),
		Orders:          []Order{}, Subscriptions: []Subscription{}, Cards: []Card{},
	}, answer: nu.Answer}
	a.setPassword(nu.Password)
	for _, c := range nu.Cards {
		c.ID = s.newID("card")
		a.Cards = append(a.Cards, c)
	}
	orders := s.orderGen(a).history(nu.Orders)
	for _, o := range orders {
		s.orderOwner[o.Number] = a
	}
	a.Orders = orders
	if nu.Subscriptions {
		a.Subscriptions = subscriptionsFor(email, now, a.CreatedAt, nu.family)
	}
	s.users[email] = a
	return a, nil
}

func (s *Shop) orderGen(a *account) orderGen {
	return orderGen{
		email: a.Email, now: s.cfg.Now().UTC(), since: a.CreatedAt, cards: a.Cards, address: a.ShippingAddress,
		reserve: func(n string) bool {
			if _, ok := s.orderOwner[n]; ok {
				return false
			}
			s.orderOwner[n] = nil // claimed; the caller sets the owner
			return true
		},
	}
}

// addOrder files an order under a user, keeping them newest first; s.mu
// is held.
func (s *Shop) addOrder(a *account, o Order) {
	s.orderOwner[o.Number] = a
	a.Orders = append(a.Orders, o)
	sortOrders(a.Orders)
}

func sortOrders(orders []Order) {
	slices.SortStableFunc(orders, func(x, y Order) int {
		if c := y.PlacedAt.Compare(x.PlacedAt); c != 0 {
			return c
		}
		return strings.Compare(x.Number, y.Number)
	})
}

// snapshot is a copy of the user's data for rendering or JSON, with the
// tier computed; s.mu is held.
func (a *account) snapshot() User {
	u := a.User
	u.Orders = slices.Clone(a.Orders)
	u.Subscriptions = slices.Clone(a.Subscriptions)
	u.Cards = slices.Clone(a.Cards)
	u.Tier = tierFor(a.Orders)
	return u
}

func (a *account) setPassword(pw string) {
	a.salt = []byte(randomToken())
	a.pwHash = hashPassword(a.salt, pw)
}

func (a *account) passwordIs(pw string) bool {
	return subtle.ConstantTimeCompare(hashPassword(a.salt, pw), a.pwHash) == 1
}

func hashPassword(salt []byte, pw string) []byte {
	h := sha256.New()
	h.Write(salt)
	h.Write([]byte(pw))
	return h.Sum(nil)
}

func (s *Shop) newID(prefix string) string {
	s.nextID++
	return fmt.Sprintf("%s_%d", prefix, s.nextID)
}

func normEmail(e string) string { return strings.ToLower(strings.TrimSpace(e)) }

func randomToken() string {
	b := make([]byte, 24)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

func equalTokens(a, b string) bool {
	return a != "" && subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}

func setCookie(w http.ResponseWriter, r *http.Request, name, value string) {
	http.SetCookie(w, &http.Cookie{
		Name: name, Value: value, Path: "/", HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: r.TLS != nil,
	})
}

func clearCookie(w http.ResponseWriter, name string) {
	http.SetCookie(w, &http.Cookie{Name: name, Value: "", Path: "/", MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteLaxMode})
}

func cookieValue(r *http.Request, name string) string {
	c, err := r.Cookie(name)
	if err != nil {
		return ""
	}
	return c.Value
}

// preSession returns the browser's pre-session, making one (and its
// cookie) when create is set; s.mu is held.
func (s *Shop) preSession(w http.ResponseWriter, r *http.Request, create bool) *preSession {
	now := s.cfg.Now()
	if ps, ok := s.pre[cookieValue(r, preCookie)]; ok && now.Sub(ps.lastSeen) < preTTL {
		ps.lastSeen = now
		return ps
	}
	if !create {
		return nil
	}
	if len(s.pre) > 1000 {
		for id, ps := range s.pre {
			if now.Sub(ps.lastSeen) >= preTTL {
				delete(s.pre, id)
			}
		}
	}
	id := randomToken()
	ps := &preSession{csrf: randomToken(), lastSeen: now}
	s.pre[id] = ps
	setCookie(w, r, preCookie, id)
	return ps
}

// currentUser is the signed-in user of the request, or nil when the
// session is missing, expired or revoked; s.mu is held.
func (s *Shop) currentUser(r *http.Request) (*account, *session) {
	id := cookieValue(r, sessionCookie)
	sess, ok := s.sessions[id]
	if !ok {
		return nil, nil
	}
	now := s.cfg.Now()
	a := s.users[sess.email]
	if a == nil || now.Sub(sess.lastSeen) > s.cfg.SessionTTL {
		delete(s.sessions, id)
		return nil, nil
	}
	sess.lastSeen = now
	return a, sess
}

// startSession signs the user in; s.mu is held.
func (s *Shop) startSession(w http.ResponseWriter, r *http.Request, email string) {
	now := s.cfg.Now()
	if len(s.sessions) > 1000 {
		for id, sess := range s.sessions {
			if now.Sub(sess.lastSeen) > s.cfg.SessionTTL {
				delete(s.sessions, id)
			}
		}
	}
	id := randomToken()
	s.sessions[id] = &session{email: email, csrf: randomToken(), lastSeen: now}
	setCookie(w, r, sessionCookie, id)
}

// revokeSessions ends every session of the user; s.mu is held.
func (s *Shop) revokeSessions(email string) int {
	n := 0
	for id, sess := range s.sessions {
		if sess.email == email {
			delete(s.sessions, id)
			n++
		}
	}
	return n
}

// toSignin sends a visitor without a valid session to the sign-in page,
// to come back afterwards.
func toSignin(w http.ResponseWriter, r *http.Request) {
	http.Redirect(w, r, "/signin?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
}

// safeNext is where to go after signing in: a path on this site only.
func safeNext(next string) string {
	if !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || strings.HasPrefix(next, "/\\") ||
		strings.HasPrefix(next, "/signin") {
		return "/account"
	}
	return next
}

// jsProof is what the sign-in page's script computes from the nonce in the
// page (static/shop.js): rounds of FNV-1a, cheap in a browser and absent
// from a plain HTTP client.
func jsProof(nonce string) string {
	h := uint32(2166136261)
	for round := range 500 {
		for _, c := range []byte(fmt.Sprintf("%s:%d", nonce, round)) {
			h ^= uint32(c)
			h *= 16777619
		}
	}
	return fmt.Sprintf("%08x", h)
}
