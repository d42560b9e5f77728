package refshop

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"html/template"
	"io/fs"
	"math/big"
	mrand "math/rand/v2"
	"net/http"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"
)

type pageTemplate = *template.Template

// page is what every template gets; Data is the page's own.
type page struct {
	Title  string
	User   *User // the signed-in user, for the navigation
	CSRF   string
	Error  string
	Notice string
	Data   any
}

var templateFuncs = template.FuncMap{
	"money":    money,
	"date":     func(t time.Time) string { return t.UTC().Format("Jan 2, 2006") },
	"iso":      func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
	"isoDate":  func(t time.Time) string { return t.UTC().Format("2006-01-02") },
	"expiry":   func(c Card) string { return fmt.Sprintf("%02d/%d", c.ExpMonth, c.ExpYear) },
	"lower":    strings.ToLower,
	"statusID": func(s string) string { return strings.ReplaceAll(strings.ToLower(s), " ", "-") },
}

// parsePages parses each page template with the layout. The templates are
// embedded, so an error is a bug that every test shows.
func parsePages() map[string]pageTemplate {
	pages := map[string]pageTemplate{}
	names, _ := fs.Glob(assets, "templates/*.html")
	for _, n := range names {
		base := path.Base(n)
		if base == "layout.html" {
			continue
		}
		t := template.Must(template.New(base).Funcs(templateFuncs).ParseFS(assets, "templates/layout.html", n))
		pages[strings.TrimSuffix(base, ".html")] = t
	}
	return pages
}

// money shows cents as dollars: 1234 → $12.34, 123456 → $1,234.56,
// -500 → -$5.00.
func money(cents int64) string {
	sign := ""
	if cents < 0 {
		sign, cents = "-", -cents
	}
	dollars := strconv.FormatInt(cents/100, 10)
	for i := len(dollars) - 3; i > 0; i -= 3 {
		dollars = dollars[:i] + "," + dollars[i:]
	}
	return fmt.Sprintf("%s$%s.%02d", sign, dollars, cents%100)
}

func (s *Shop) render(w http.ResponseWriter, status int, name string, p page) {
	var buf bytes.Buffer
	if err := s.pages[name].ExecuteTemplate(&buf, "layout", p); err != nil {
		s.log.Error("refshop: rendering a page", "page", name, "error", err)
		http.Error(w, "Something went wrong", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

func (s *Shop) errorPage(w http.ResponseWriter, status int, title, msg string) {
	s.render(w, status, "error", page{Title: title, Error: msg})
}

// badForm answers a form post that did not come from the site's own page
// running its script.
func (s *Shop) badForm(w http.ResponseWriter) {
	s.errorPage(w, http.StatusBadRequest, "Sign in", "Please enable JavaScript and try again.")
}

func parseForm(w http.ResponseWriter, r *http.Request) bool {
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	return r.ParseForm() == nil
}

func (s *Shop) home(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	a, _ := s.currentUser(r)
	s.mu.Unlock()
	if a != nil {
		http.Redirect(w, r, "/account", http.StatusSeeOther)
		return
	}
	s.render(w, http.StatusOK, "home", page{Title: "Welcome", Data: catalog})
}

// signinData is the sign-in form's.
type signinData struct {
	Nonce, Next, Email string
}

func (s *Shop) signinPage(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	if a, _ := s.currentUser(r); a != nil {
		s.mu.Unlock()
		http.Redirect(w, r, safeNext(r.URL.Query().Get("next")), http.StatusSeeOther)
		return
	}
	ps := s.preSession(w, r, true)
	ps.nonce = randomToken()
	ps.pending, ps.stage = "", ""
	p := page{Title: "Sign in", CSRF: ps.csrf, Error: ps.flash,
		Data: signinData{Nonce: ps.nonce, Next: r.URL.Query().Get("next")}}
	ps.flash = ""
	s.mu.Unlock()
	s.render(w, http.StatusOK, "signin", p)
}

func (s *Shop) signin(w http.ResponseWriter, r *http.Request) {
	if !parseForm(w, r) {
		s.badForm(w)
		return
	}
	email, next := normEmail(r.PostFormValue("email")), r.PostFormValue("next")
	s.mu.Lock()
	ps := s.preSession(w, r, false)
	if ps == nil || !equalTokens(r.PostFormValue("csrf_token"), ps.csrf) || ps.nonce == "" ||
		!equalTokens(r.PostFormValue("js_proof"), jsProof(ps.nonce)) {
		s.mu.Unlock()
		s.log.Info("refshop: sign-in refused without a valid form token or script proof")
		s.badForm(w)
		return
	}
	ps.nonce = randomToken() // one proof per page
	formAgain := func(msg string) {
		p := page{Title: "Sign in", CSRF: ps.csrf, Error: msg, Data: signinData{Nonce: ps.nonce, Next: next, Email: email}}
		s.mu.Unlock()
		s.render(w, http.StatusOK, "signin", p)
	}
	a := s.users[email]
	switch {
	case a != nil && a.Locked:
		s.log.Info("refshop: sign-in to a locked account", "email", email)
		formAgain("Your account is locked. Contact support.")
		return
	case a == nil || !a.passwordIs(r.PostFormValue("password")):
		s.log.Info("refshop: sign-in with a wrong e-mail or password", "email", email)
		formAgain("Your email or password is incorrect.")
		return
	}
	ps.pending, ps.next, ps.attempts = a.Email, next, 0
	switch a.TwoFactor {
	case "email":
		ps.stage, ps.code, ps.codeExpires = "verify", sixDigits(), s.cfg.Now().Add(codeTTL)
		s.sendMail(a.Email, "Your Hitch Reference Shop sign-in code",
			"Your sign-in code is "+ps.code+". It expires in 10 minutes. If you did not try to sign in, change your password.")
		s.mu.Unlock()
		http.Redirect(w, r, "/signin/verify", http.StatusSeeOther)
	case "question":
		ps.stage = "question"
		s.mu.Unlock()
		http.Redirect(w, r, "/signin/question", http.StatusSeeOther)
	default:
		s.finishSignin(w, r, ps)
	}
}

// finishSignin starts the session of the pending user and leaves; s.mu is
// held and released.
func (s *Shop) finishSignin(w http.ResponseWriter, r *http.Request, ps *preSession) {
	email, next := ps.pending, ps.next
	ps.pending, ps.stage, ps.code, ps.next = "", "", "", ""
	s.startSession(w, r, email)
	s.mu.Unlock()
	s.log.Info("refshop: signed in", "email", email)
	http.Redirect(w, r, safeNext(next), http.StatusSeeOther)
}

// secondFactorData is the verify and question pages'.
type secondFactorData struct {
	Email, Question string
}

func (s *Shop) verifyPage(w http.ResponseWriter, r *http.Request) { s.secondFactorPage(w, r, "verify") }

func (s *Shop) questionPage(w http.ResponseWriter, r *http.Request) {
	s.secondFactorPage(w, r, "question")
}

func (s *Shop) secondFactorPage(w http.ResponseWriter, r *http.Request, stage string) {
	s.mu.Lock()
	ps := s.preSession(w, r, false)
	if ps == nil || ps.stage != stage {
		s.mu.Unlock()
		http.Redirect(w, r, "/signin", http.StatusSeeOther)
		return
	}
	p := page{Title: "Verify it's you", CSRF: ps.csrf, Data: s.secondFactorData(ps)}
	s.mu.Unlock()
	s.render(w, http.StatusOK, stage, p)
}

// secondFactorData is what the pending user's second-factor page shows;
// s.mu is held.
func (s *Shop) secondFactorData(ps *preSession) secondFactorData {
	d := secondFactorData{Email: maskEmail(ps.pending)}
	if a := s.users[ps.pending]; a != nil {
		d.Question = a.Question
	}
	return d
}

func (s *Shop) verify(w http.ResponseWriter, r *http.Request) {
	s.secondFactor(w, r, "verify", func(ps *preSession, a *account, given string) (bool, string) {
		if s.cfg.Now().After(ps.codeExpires) {
			return false, "That code has expired. Please sign in again."
		}
		return equalTokens(strings.TrimSpace(given), ps.code), "That code is not right."
	}, "code")
}

func (s *Shop) question(w http.ResponseWriter, r *http.Request) {
	s.secondFactor(w, r, "question", func(ps *preSession, a *account, given string) (bool, string) {
		ok := strings.EqualFold(strings.TrimSpace(given), strings.TrimSpace(a.answer))
		return ok, "That answer is not right."
	}, "answer")
}

// secondFactor checks the field of a second-factor form with check, which
// says whether it is right and what to show when not. A message ending in
// "sign in again." ends the attempt at once.
func (s *Shop) secondFactor(w http.ResponseWriter, r *http.Request, stage string,
	check func(ps *preSession, a *account, given string) (bool, string), field string) {
	if !parseForm(w, r) {
		s.badForm(w)
		return
	}
	s.mu.Lock()
	ps := s.preSession(w, r, false)
	if ps == nil || !equalTokens(r.PostFormValue("csrf_token"), ps.csrf) {
		s.mu.Unlock()
		s.badForm(w)
		return
	}
	a := s.users[ps.pending]
	if ps.stage != stage || a == nil {
		s.mu.Unlock()
		http.Redirect(w, r, "/signin", http.StatusSeeOther)
		return
	}
	ok, msg := check(ps, a, r.PostFormValue(field))
	if ok {
		s.finishSignin(w, r, ps)
		return
	}
	ps.attempts++
	if ps.attempts >= maxAttempts || strings.HasSuffix(msg, "sign in again.") {
		if !strings.HasSuffix(msg, "sign in again.") {
			msg = "Too many attempts. Please sign in again."
		}
		ps.pending, ps.stage, ps.code, ps.flash = "", "", "", msg
		s.mu.Unlock()
		s.log.Info("refshop: second factor failed; sign-in starts over", "email", a.Email)
		http.Redirect(w, r, "/signin", http.StatusSeeOther)
		return
	}
	p := page{Title: "Verify it's you", CSRF: ps.csrf, Error: msg, Data: s.secondFactorData(ps)}
	s.mu.Unlock()
	s.render(w, http.StatusOK, stage, p)
}

func sixDigits() string {
	n, _ := rand.Int(rand.Reader, big.NewInt(1000000))
	return fmt.Sprintf("%06d", n.Int64())
}

func maskEmail(e string) string {
	local, domain, ok := strings.Cut(e, "@")
	if !ok || local == "" {
		return e
	}
	return local[:1] + "***@" + domain
}

// sendMail puts a message in the test mailbox; s.mu is held.
func (s *Shop) sendMail(to, subject, body string) {
	to = normEmail(to)
	s.mail[to] = append(s.mail[to], message{To: to, Subject: subject, Body: body, SentAt: s.cfg.Now().UTC()})
}

// forgotData is the forgot-password page's answer.
type forgotData struct {
	Asked       bool
	Exists      bool
	Destination string
	CreatedAt   time.Time
}

func (s *Shop) forgotPage(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	ps := s.preSession(w, r, true)
	p := page{Title: "Reset your password", CSRF: ps.csrf, Data: forgotData{}}
	s.mu.Unlock()
	s.render(w, http.StatusOK, "forgot", p)
}

func (s *Shop) forgot(w http.ResponseWriter, r *http.Request) {
	if !parseForm(w, r) {
		s.badForm(w)
		return
	}
	s.mu.Lock()
	ps := s.preSession(w, r, false)
	if ps == nil || !equalTokens(r.PostFormValue("csrf_token"), ps.csrf) {
		s.mu.Unlock()
		s.badForm(w)
		return
	}
	id := strings.TrimSpace(r.PostFormValue("identifier"))
	d := forgotData{Asked: true}
	if a := s.findAccount(id); a != nil {
		d.Exists, d.CreatedAt = true, a.CreatedAt
		if strings.Contains(id, "@") {
			d.Destination = maskEmail(a.Email)
			s.sendMail(a.Email, "Reset your Hitch Reference Shop password",
				"Someone asked to reset your password. This test shop does not reset passwords; sign in at /signin.")
		} else {
			digits := onlyDigits(a.Phone)
			d.Destination = "the phone number ending in " + digits[max(0, len(digits)-4):]
		}
	}
	p := page{Title: "Reset your password", CSRF: ps.csrf, Data: d}
	s.mu.Unlock()
	s.render(w, http.StatusOK, "forgot", p)
}

// findAccount looks a user up by e-mail or phone number; s.mu is held.
func (s *Shop) findAccount(id string) *account {
	if strings.Contains(id, "@") {
		return s.users[normEmail(id)]
	}
	want := nationalDigits(id)
	if len(want) < 7 {
		return nil
	}
	for _, a := range s.users {
		if nationalDigits(a.Phone) == want {
			return a
		}
	}
	return nil
}

func onlyDigits(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return r
		}
		return -1
	}, s)
}

// nationalDigits drops the North American country code, so that +1 415…
// and (415) … match.
func nationalDigits(phone string) string {
	d := onlyDigits(phone)
	if len(d) == 11 && d[0] == '1' {
		return d[1:]
	}
	return d
}

func (s *Shop) signout(w http.ResponseWriter, r *http.Request) {
	if !parseForm(w, r) {
		s.badForm(w)
		return
	}
	s.mu.Lock()
	_, sess := s.currentUser(r)
	if sess != nil && equalTokens(r.PostFormValue("csrf_token"), sess.csrf) {
		delete(s.sessions, cookieValue(r, sessionCookie))
	}
	s.mu.Unlock()
	clearCookie(w, sessionCookie)
	http.Redirect(w, r, "/signin", http.StatusSeeOther)
}

// signedIn is the page for the request's user, or false after sending the
// visitor to sign in.
func (s *Shop) signedIn(w http.ResponseWriter, r *http.Request, title string) (page, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, sess := s.currentUser(r)
	if a == nil {
		toSignin(w, r)
		return page{}, false
	}
	u := a.snapshot()
	return page{Title: title, User: &u, CSRF: sess.csrf}, true
}

func (s *Shop) accountPage(w http.ResponseWriter, r *http.Request) {
	p, ok := s.signedIn(w, r, "Your account")
	if !ok {
		return
	}
	s.render(w, http.StatusOK, "account", p)
}

// ordersFault answers an orders page with the configured failure rate.
func (s *Shop) ordersFault(w http.ResponseWriter) bool {
	s.mu.Lock()
	rate := s.faults.OrdersFailRate
	s.mu.Unlock()
	if rate > 0 && mrand.Float64() < rate {
		s.errorPage(w, http.StatusServiceUnavailable, "Something went wrong",
			"Something went wrong on our end. Please try again in a few minutes.")
		return true
	}
	return false
}

const ordersPerPage = 10

// ordersData is the order history page's.
type ordersData struct {
	Orders             []Order
	Page, Pages        int
	PrevPage, NextPage int
}

func (s *Shop) ordersPage(w http.ResponseWriter, r *http.Request) {
	p, ok := s.signedIn(w, r, "Your orders")
	if !ok || s.ordersFault(w) {
		return
	}
	all := p.User.Orders
	n, err := strconv.Atoi(r.URL.Query().Get("page"))
	if err != nil || n < 1 {
		n = 1
	}
	d := ordersData{Page: n, Pages: max(1, (len(all)+ordersPerPage-1)/ordersPerPage)}
	if from := (n - 1) * ordersPerPage; from < len(all) {
		d.Orders = all[from:min(len(all), from+ordersPerPage)]
	}
	if n > 1 {
		d.PrevPage = min(n-1, d.Pages)
	}
	if n*ordersPerPage < len(all) {
		d.NextPage = n + 1
	}
	p.Data = d
	s.render(w, http.StatusOK, "orders", p)
}

func (s *Shop) orderPage(w http.ResponseWriter, r *http.Request) {
	p, ok := s.signedIn(w, r, "Order details")
	if !ok || s.ordersFault(w) {
		return
	}
	i := slices.IndexFunc(p.User.Orders, func(o Order) bool { return o.Number == r.PathValue("number") })
	if i < 0 {
		p.Error = "We could not find that order."
		s.render(w, http.StatusNotFound, "error", p)
		return
	}
	p.Title = "Order " + p.User.Orders[i].Number
	p.Data = p.User.Orders[i]
	s.render(w, http.StatusOK, "order", p)
}

func (s *Shop) subscriptionsPage(w http.ResponseWriter, r *http.Request) {
	p, ok := s.signedIn(w, r, "Your subscriptions")
	if !ok {
		return
	}
	s.render(w, http.StatusOK, "subscriptions", p)
}

// walletData is the wallet page's; Form holds what was typed back, never
// the card number or CVV.
type walletData struct {
	Form   cardForm
	Months []int
	Years  []int
}

type cardForm struct {
	Name, ExpMonth, ExpYear, Postal string
	MakeDefault                     bool
}

func (s *Shop) walletData(f cardForm) walletData {
	y := s.cfg.Now().Year()
	d := walletData{Form: f}
	for m := 1; m <= 12; m++ {
		d.Months = append(d.Months, m)
	}
	for i := range 12 {
		d.Years = append(d.Years, y+i)
	}
	return d
}

func (s *Shop) walletPage(w http.ResponseWriter, r *http.Request) {
	p, ok := s.signedIn(w, r, "Your wallet")
	if !ok {
		return
	}
	q := r.URL.Query()
	for _, c := range p.User.Cards {
		switch c.ID {
		case q.Get("added"):
			p.Notice = fmt.Sprintf("Your %s ending in %s was added.", c.Brand, c.Last4)
		case q.Get("default"):
			p.Notice = fmt.Sprintf("Your %s ending in %s is now your default card.", c.Brand, c.Last4)
		}
	}
	p.Data = s.walletData(cardForm{})
	s.render(w, http.StatusOK, "wallet", p)
}

// walletPost checks a wallet form post (a session and its CSRF token) and
// returns its user with s.mu held; when ok is false it has answered and
// holds nothing.
func (s *Shop) walletPost(w http.ResponseWriter, r *http.Request) (*account, *session, bool) {
	if !parseForm(w, r) {
		s.badForm(w)
		return nil, nil, false
	}
	s.mu.Lock()
	a, sess := s.currentUser(r)
	if a == nil {
		s.mu.Unlock()
		toSignin(w, r)
		return nil, nil, false
	}
	if !equalTokens(r.PostFormValue("csrf_token"), sess.csrf) {
		s.mu.Unlock()
		s.badForm(w)
		return nil, nil, false
	}
	return a, sess, true
}

func (s *Shop) addCard(w http.ResponseWriter, r *http.Request) {
	a, sess, ok := s.walletPost(w, r)
	if !ok {
		return
	}
	f := cardForm{
		Name: strings.TrimSpace(r.PostFormValue("cardholder_name")), ExpMonth: r.PostFormValue("exp_month"),
		ExpYear: r.PostFormValue("exp_year"), Postal: strings.TrimSpace(r.PostFormValue("postal_code")),
		MakeDefault: r.PostFormValue("make_default") != "",
	}
	c, msg := validateCard(f, r.PostFormValue("card_number"), r.PostFormValue("cvv"), s.cfg.Now())
	if msg == "" && slices.ContainsFunc(a.Cards, func(x Card) bool {
		return x.Brand == c.Brand && x.Last4 == c.Last4 && x.ExpMonth == c.ExpMonth && x.ExpYear == c.ExpYear
	}) {
		msg = "This card is already in your wallet."
	}
	if msg != "" {
		u := a.snapshot()
		p := page{Title: "Your wallet", User: &u, CSRF: sess.csrf, Error: msg, Data: s.walletData(f)}
		s.mu.Unlock()
		s.log.Info("refshop: card refused", "email", a.Email, "reason", msg)
		s.render(w, http.StatusOK, "wallet", p)
		return
	}
	c.ID = s.newID("card")
	if f.MakeDefault || len(a.Cards) == 0 {
		for i := range a.Cards {
			a.Cards[i].Default = false
		}
		c.Default = true
	}
	a.Cards = append(a.Cards, c)
	s.mu.Unlock()
	s.log.Info("refshop: card added", "email", a.Email, "brand", c.Brand, "default", c.Default)
	http.Redirect(w, r, "/wallet?added="+c.ID, http.StatusSeeOther)
}

func (s *Shop) makeDefault(w http.ResponseWriter, r *http.Request) {
	a, _, ok := s.walletPost(w, r)
	if !ok {
		return
	}
	id := r.PathValue("id")
	if !slices.ContainsFunc(a.Cards, func(c Card) bool { return c.ID == id }) {
		s.mu.Unlock()
		s.errorPage(w, http.StatusNotFound, "Your wallet", "We could not find that card.")
		return
	}
	for i := range a.Cards {
		a.Cards[i].Default = a.Cards[i].ID == id
	}
	s.mu.Unlock()
	http.Redirect(w, r, "/wallet?default="+id, http.StatusSeeOther)
}

// declined are the test card numbers the shop declines, and why.
var declined = map[string]string{
	"4000000000000002": "Your card was declined.",
	"4000000000009995": "Your card has insufficient funds.",
	"4000000000000069": "Your card has expired.",
}

// validateCard checks a card form and returns the card to keep (brand,
// last four, expiry) or the message to show. number and cvv are used here
// only and dropped.
func validateCard(f cardForm, number, cvv string, now time.Time) (Card, string) {
	digits := strings.NewReplacer(" ", "", "-", "").Replace(number)
	month, errM := strconv.Atoi(f.ExpMonth)
	year, errY := strconv.Atoi(f.ExpYear)
	brand := cardBrand(digits)
	cvvLen := 3
	if brand == "American Express" {
		cvvLen = 4
	}
	switch {
	case f.Name == "":
		return Card{}, "Enter the name on the card."
	case len(digits) < 12 || len(digits) > 19 || onlyDigits(digits) != digits:
		return Card{}, "Enter a valid card number."
	case !luhn(digits):
		return Card{}, "Your card number is incorrect."
	case errM != nil || errY != nil || month < 1 || month > 12 || year > now.Year()+20:
		return Card{}, "Enter a valid expiry date."
	case !time.Date(year, time.Month(month)+1, 1, 0, 0, 0, 0, time.UTC).After(now):
		return Card{}, "Your card has expired."
	case len(cvv) != cvvLen || onlyDigits(cvv) != cvv:
		return Card{}, "Enter the security code on the back of your card."
	case len(f.Postal) < 3 || len(f.Postal) > 10:
		return Card{}, "Enter the billing postal code."
	}
	if msg, ok := declined[digits]; ok {
		return Card{}, msg
	}
	return Card{Brand: brand, Last4: digits[len(digits)-4:], ExpMonth: month, ExpYear: year}, ""
}

func luhn(digits string) bool {
	sum := 0
	double := false
	for i := len(digits) - 1; i >= 0; i-- {
		d := int(digits[i] - '0')
		if double {
			d *= 2
			if d > 9 {
				d -= 9
			}
		}
		sum += d
		double = !double
	}
	return sum%10 == 0
}

func cardBrand(digits string) string {
	prefix := func(n int) int {
		if len(digits) < n {
			return -1
		}
		v, _ := strconv.Atoi(digits[:n])
		return v
	}
	switch {
	case strings.HasPrefix(digits, "4"):
		return "Visa"
	case prefix(2) >= 51 && prefix(2) <= 55, prefix(4) >= 2221 && prefix(4) <= 2720:
		return "Mastercard"
	case prefix(2) == 34 || prefix(2) == 37:
		return "American Express"
	case prefix(4) == 6011 || prefix(2) == 65:
		return "Discover"
	}
	return "Card"
}

// mailboxData is the test mailbox's.
type mailboxData struct {
	To       string
	Messages []message
}

func (s *Shop) mailboxPage(w http.ResponseWriter, r *http.Request) {
	to := normEmail(r.URL.Query().Get("to"))
	s.mu.Lock()
	msgs := slices.Clone(s.mail[to])
	s.mu.Unlock()
	slices.Reverse(msgs)
	s.render(w, http.StatusOK, "mailbox", page{Title: "Test mailbox", Data: mailboxData{To: to, Messages: msgs}})
}

func (s *Shop) productPage(w http.ResponseWriter, r *http.Request) {
	p, ok := findProduct(r.PathValue("sku"))
	if !ok {
		s.errorPage(w, http.StatusNotFound, "Not found", "We could not find that product.")
		return
	}
	s.render(w, http.StatusOK, "product", page{Title: p.Name, Data: p})
}

// productImage draws a product's picture: a tile with its initials.
func (s *Shop) productImage(w http.ResponseWriter, r *http.Request) {
	p, ok := findProduct(strings.TrimSuffix(r.PathValue("file"), ".svg"))
	if !ok || !strings.HasSuffix(r.PathValue("file"), ".svg") {
		http.NotFound(w, r)
		return
	}
	var initials string
	for _, word := range strings.Fields(p.Name)[:min(2, len(strings.Fields(p.Name)))] {
		initials += word[:1]
	}
	hue := 0
	for _, c := range p.SKU {
		hue = (hue*31 + int(c)) % 360
	}
	w.Header().Set("Content-Type", "image/svg+xml")
	w.Header().Set("Cache-Control", "public, max-age=86400")
	fmt.Fprintf(w, `<svg xmlns="http://www.w3.org/2000/svg" width="160" height="160" viewBox="0 0 160 160">`+
		`<rect width="160" height="160" rx="16" fill="hsl(%d,55%%,55%%)"/>`+
		`<text x="80" y="96" font-family="sans-serif" font-size="48" fill="#fff" text-anchor="middle">%s</text></svg>`,
		hue, template.HTMLEscapeString(initials))
}
