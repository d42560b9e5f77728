package refshop

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"time"
)

// apiError is an admin API error whose text the caller sees.
type apiError struct {
	status int
	msg    string
}

func (e *apiError) Error() string { return e.msg }

func apiErrorf(status int, format string, args ...any) error {
	return &apiError{status: status, msg: fmt.Sprintf(format, args...)}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// adminTokenOK compares digests so that neither the content nor the length
// of the token leaks through timing.
func (s *Shop) adminTokenOK(token string) bool {
	if s.cfg.AdminToken == "" || token == "" {
		return false
	}
	a, b := sha256.Sum256([]byte(token)), sha256.Sum256([]byte(s.cfg.AdminToken))
	return subtle.ConstantTimeCompare(a[:], b[:]) == 1
}

// api adapts an admin API handler: it checks the bearer token and writes
// errors as {"error": "..."}.
func (s *Shop) api(h func(http.ResponseWriter, *http.Request) error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.cfg.AdminToken == "" {
			writeJSON(w, http.StatusForbidden, map[string]string{"error": "the admin API is off: no admin token is configured"})
			return
		}
		token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || !s.adminTokenOK(token) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="refshop admin"`)
			writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "a valid admin token is required"})
			return
		}
		err := h(w, r)
		if err == nil {
			return
		}
		var ae *apiError
		if !errors.As(err, &ae) {
			s.log.Error("refshop: admin API", "path", r.URL.Path, "error", err)
			ae = &apiError{http.StatusInternalServerError, "internal error"}
		}
		writeJSON(w, ae.status, map[string]string{"error": ae.msg})
	})
}

func decodeJSON(w http.ResponseWriter, r *http.Request, v any) error {
	r.Body = http.MaxBytesReader(w, r.Body, 1<<20)
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return apiErrorf(http.StatusBadRequest, "invalid JSON body: %v", err)
	}
	return nil
}

// userByPath is the user named in the path; s.mu is held.
func (s *Shop) userByPath(r *http.Request) (*account, error) {
	a := s.users[normEmail(r.PathValue("email"))]
	if a == nil {
		return nil, apiErrorf(http.StatusNotFound, "no user with this e-mail")
	}
	return a, nil
}

func (s *Shop) apiCreateUser(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		Email         string     `json:"email"`
		Password      string     `json:"password"`
		Name          string     `json:"name"`
		Phone         string     `json:"phone"`
		TwoFactor     string     `json:"two_factor"`
		Question      string     `json:"question"`
		Answer        string     `json:"answer"`
		Orders        int        `json:"orders"`
		Subscriptions bool       `json:"subscriptions"`
		CreatedAt     *time.Time `json:"created_at"`
		Locked        bool       `json:"locked"`
	}
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	if in.TwoFactor == "" {
		in.TwoFactor = "none"
	}
	now := s.cfg.Now()
	switch local, domain, _ := strings.Cut(strings.TrimSpace(in.Email), "@"); {
	case local == "" || !strings.Contains(domain, ".") || len(in.Email) > 254:
		return apiErrorf(http.StatusBadRequest, "email must be an e-mail address")
	case in.Password == "":
		return apiErrorf(http.StatusBadRequest, "password is required")
	case !slices.Contains([]string{"none", "email", "question"}, in.TwoFactor):
		return apiErrorf(http.StatusBadRequest, "two_factor must be none, email or question")
	case in.TwoFactor == "question" && (strings.TrimSpace(in.Question) == "" || strings.TrimSpace(in.Answer) == ""):
		return apiErrorf(http.StatusBadRequest, "two_factor question needs question and answer")
	case in.Orders < 0 || in.Orders > 500:
		return apiErrorf(http.StatusBadRequest, "orders must be between 0 and 500")
	case in.CreatedAt != nil && in.CreatedAt.After(now):
		return apiErrorf(http.StatusBadRequest, "created_at must not be in the future")
	}
	nu := newUser{
		Email: in.Email, Password: in.Password, Name: in.Name, Phone: in.Phone,
		TwoFactor: in.TwoFactor, Question: in.Question, Answer: in.Answer,
		Orders: in.Orders, Subscriptions: in.Subscriptions, family: in.Subscriptions, Locked: in.Locked,
	}
	if in.CreatedAt != nil {
		nu.CreatedAt = *in.CreatedAt
	}
	s.mu.Lock()
	a, err := s.addUser(nu)
	s.mu.Unlock()
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, map[string]string{"email": a.Email})
	return nil
}

func (s *Shop) apiGetUser(w http.ResponseWriter, r *http.Request) error {
	s.mu.Lock()
	a, err := s.userByPath(r)
	var u User
	if err == nil {
		u = a.snapshot()
	}
	s.mu.Unlock()
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, u)
	return nil
}

// orderInput is an order as the admin API takes it: line totals, subtotal
// and total are computed; payments default to the default card.
type orderInput struct {
	Items           []Item       `json:"items"`
	Adjustments     []Adjustment `json:"adjustments"`
	Payments        []Payment    `json:"payments"`
	Status          string       `json:"status"`
	PlacedAt        *time.Time   `json:"placed_at"`
	ShippingAddress *Address     `json:"shipping_address"`
}

func (s *Shop) apiCreateOrder(w http.ResponseWriter, r *http.Request) error {
	var in orderInput
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	if in.Status != "" && !validStatus(in.Status) {
		return apiErrorf(http.StatusBadRequest, "status must be one of %s", strings.Join(statuses, ", "))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	a, err := s.userByPath(r)
	if err != nil {
		return err
	}
	var o Order
	if len(in.Items) == 0 {
		if len(in.Adjustments) > 0 || len(in.Payments) > 0 {
			return apiErrorf(http.StatusBadRequest, "an order with adjustments or payments needs items")
		}
		o = s.orderGen(a).one(a.extraOrders)
	} else {
		o, err = s.buildOrder(a, in)
		if err != nil {
			return err
		}
	}
	a.extraOrders++
	if in.Status != "" {
		o.Status = in.Status
	}
	if in.PlacedAt != nil {
		o.PlacedAt = in.PlacedAt.UTC().Truncate(time.Second)
	}
	if in.ShippingAddress != nil {
		o.ShippingAddress = *in.ShippingAddress
	}
	s.addOrder(a, o)
	writeJSON(w, http.StatusCreated, map[string]string{"number": o.Number})
	return nil
}

// buildOrder makes an order from the admin's input; s.mu is held.
func (s *Shop) buildOrder(a *account, in orderInput) (Order, error) {
	o := Order{Status: "Ordered", PlacedAt: s.cfg.Now().UTC().Truncate(time.Second), ShippingAddress: a.ShippingAddress}
	for _, it := range in.Items {
		if p, ok := findProduct(it.SKU); ok {
			it.Name = cmpOr(it.Name, p.Name)
			it.Seller = cmpOr(it.Seller, p.Seller)
			if it.UnitPriceCents == 0 {
				it.UnitPriceCents = p.PriceCents
			}
		}
		if it.SKU == "" || it.Name == "" {
			return Order{}, apiErrorf(http.StatusBadRequest, "each item needs a sku and a name (a sku from the catalog names itself)")
		}
		it.URL = cmpOr(it.URL, productURL(it.SKU))
		it.ImageURL = cmpOr(it.ImageURL, imageURL(it.SKU))
		if it.Quantity == 0 {
			it.Quantity = 1
		}
		line := it.UnitPriceCents * int64(it.Quantity)
		if it.LineTotalCents != 0 && it.LineTotalCents != line {
			return Order{}, apiErrorf(http.StatusBadRequest, "item %s: line_total_cents must be quantity times unit_price_cents", it.SKU)
		}
		it.LineTotalCents = line
		o.Items = append(o.Items, it)
	}
	for _, adj := range in.Adjustments {
		switch {
		case !slices.Contains([]string{AdjustTax, AdjustDiscount, AdjustShipping, AdjustRefund}, adj.Kind):
			return Order{}, apiErrorf(http.StatusBadRequest, "adjustment kind must be tax, discount, shipping or refund")
		case (adj.Kind == AdjustDiscount || adj.Kind == AdjustRefund) && adj.AmountCents > 0,
			(adj.Kind == AdjustTax || adj.Kind == AdjustShipping) && adj.AmountCents < 0:
			return Order{}, apiErrorf(http.StatusBadRequest, "discounts and refunds are negative, tax and shipping are not")
		}
		if adj.Label == "" {
			adj.Label = strings.ToUpper(adj.Kind[:1]) + adj.Kind[1:]
		}
		o.Adjustments = append(o.Adjustments, adj)
	}
	o.SubtotalCents, o.TotalCents = totals(o.Items, o.Adjustments)
	o.Payments = in.Payments
	if len(o.Payments) == 0 {
		i := slices.IndexFunc(a.Cards, func(c Card) bool { return c.Default })
		if i < 0 {
			return Order{}, apiErrorf(http.StatusBadRequest, "payments are required: the user has no default card")
		}
		o.Payments = []Payment{{Method: MethodCard, Brand: a.Cards[i].Brand, Last4: a.Cards[i].Last4, AmountCents: o.TotalCents}}
	}
	for _, p := range o.Payments {
		if (p.Method != MethodCard && p.Method != MethodGiftCard) || len(p.Last4) != 4 || onlyDigits(p.Last4) != p.Last4 ||
			(p.Method == MethodCard && p.Brand == "") {
			return Order{}, apiErrorf(http.StatusBadRequest, "a payment needs method card (with a brand) or gift_card, and four digits in last4")
		}
	}
	if err := checkOrder(o); err != nil {
		return Order{}, apiErrorf(http.StatusBadRequest, "%v", err)
	}
	o.Number = s.orderGen(a).number(rngFor(a.Email, "manual", fmt.Sprint(a.extraOrders)))
	return o, nil
}

func cmpOr(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// setStatus changes an order's status; s.mu is held.
func (s *Shop) setStatus(number, status string) error {
	if !validStatus(status) {
		return apiErrorf(http.StatusBadRequest, "status must be one of %s", strings.Join(statuses, ", "))
	}
	a := s.orderOwner[number]
	if a == nil {
		return apiErrorf(http.StatusNotFound, "no order with this number")
	}
	i := slices.IndexFunc(a.Orders, func(o Order) bool { return o.Number == number })
	a.Orders[i].Status = status
	return nil
}

func (s *Shop) apiSetStatus(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		Status string `json:"status"`
	}
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	s.mu.Lock()
	err := s.setStatus(r.PathValue("number"), in.Status)
	s.mu.Unlock()
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]string{"number": r.PathValue("number"), "status": in.Status})
	return nil
}

func (s *Shop) apiSetPassword(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		Password string `json:"password"`
	}
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	if in.Password == "" {
		return apiErrorf(http.StatusBadRequest, "password is required")
	}
	s.mu.Lock()
	a, err := s.userByPath(r)
	n := 0
	if err == nil {
		a.setPassword(in.Password)
		n = s.revokeSessions(a.Email)
	}
	s.mu.Unlock()
	if err != nil {
		return err
	}
	s.log.Info("refshop: password changed; sessions revoked", "email", a.Email, "sessions", n)
	writeJSON(w, http.StatusOK, map[string]any{"email": a.Email, "revoked_sessions": n})
	return nil
}

func (s *Shop) apiGetFaults(w http.ResponseWriter, r *http.Request) error {
	s.mu.Lock()
	f := s.faults
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, f)
	return nil
}

func (s *Shop) apiSetFaults(w http.ResponseWriter, r *http.Request) error {
	var f Faults
	if err := decodeJSON(w, r, &f); err != nil {
		return err
	}
	if f.OrdersFailRate < 0 || f.OrdersFailRate > 1 || f.LatencyMS < 0 || f.LatencyMS > 60000 {
		return apiErrorf(http.StatusBadRequest, "orders_fail_rate must be 0 to 1 and latency_ms 0 to 60000")
	}
	s.mu.Lock()
	s.faults = f
	s.mu.Unlock()
	s.log.Info("refshop: faults set", "orders_fail_rate", f.OrdersFailRate, "latency_ms", f.LatencyMS)
	writeJSON(w, http.StatusOK, f)
	return nil
}

// adminData is the admin page's.
type adminData struct {
	Users    []adminUser
	Statuses []string
}

type adminUser struct {
	Email, Name, TwoFactor string
	Locked                 bool
	Orders                 []Order
}

// adminSession is the CSRF token of the admin browser session, after
// /admin?token= set its cookie; s.mu is held.
func (s *Shop) adminSession(r *http.Request) (string, bool) {
	csrf, ok := s.admins[cookieValue(r, adminCookie)]
	return csrf, ok
}

func (s *Shop) adminPage(w http.ResponseWriter, r *http.Request) {
	if token := r.URL.Query().Get("token"); token != "" {
		if !s.adminTokenOK(token) {
			s.errorPage(w, http.StatusUnauthorized, "Admin", "That admin token is not right.")
			return
		}
		id := randomToken()
		s.mu.Lock()
		s.admins[id] = randomToken()
		s.mu.Unlock()
		setCookie(w, r, adminCookie, id)
		http.Redirect(w, r, "/admin", http.StatusSeeOther) // the token leaves the address bar
		return
	}
	s.mu.Lock()
	csrf, ok := s.adminSession(r)
	var d adminData
	if ok {
		d.Statuses = statuses
		for _, a := range s.users {
			d.Users = append(d.Users, adminUser{a.Email, a.Name, a.TwoFactor, a.Locked, slices.Clone(a.Orders)})
		}
	}
	s.mu.Unlock()
	if !ok {
		s.errorPage(w, http.StatusUnauthorized, "Admin", "Open /admin?token=… with the admin token.")
		return
	}
	sort.Slice(d.Users, func(i, j int) bool { return d.Users[i].Email < d.Users[j].Email })
	s.render(w, http.StatusOK, "admin", page{Title: "Admin", CSRF: csrf, Notice: r.URL.Query().Get("notice"), Data: d})
}

// adminForm checks an admin page form post; s.mu is held on true.
func (s *Shop) adminForm(w http.ResponseWriter, r *http.Request) bool {
	if !parseForm(w, r) {
		s.badForm(w)
		return false
	}
	s.mu.Lock()
	csrf, ok := s.adminSession(r)
	if !ok || !equalTokens(r.PostFormValue("csrf_token"), csrf) {
		s.mu.Unlock()
		s.errorPage(w, http.StatusUnauthorized, "Admin", "Open /admin?token=… with the admin token.")
		return false
	}
	return true
}

func (s *Shop) adminPageCreateOrder(w http.ResponseWriter, r *http.Request) {
	if !s.adminForm(w, r) {
		return
	}
	a := s.users[normEmail(r.PostFormValue("email"))]
	if a == nil {
		s.mu.Unlock()
		s.errorPage(w, http.StatusNotFound, "Admin", "No user with this e-mail.")
		return
	}
	o := s.orderGen(a).one(a.extraOrders)
	a.extraOrders++
	s.addOrder(a, o)
	s.mu.Unlock()
	http.Redirect(w, r, "/admin?notice="+url.QueryEscape("Order "+o.Number+" created for "+a.Email+"."), http.StatusSeeOther)
}

func (s *Shop) adminPageStatus(w http.ResponseWriter, r *http.Request) {
	if !s.adminForm(w, r) {
		return
	}
	number, status := strings.TrimSpace(r.PostFormValue("number")), r.PostFormValue("status")
	err := s.setStatus(number, status)
	s.mu.Unlock()
	if err != nil {
		s.errorPage(w, http.StatusBadRequest, "Admin", err.Error())
		return
	}
	http.Redirect(w, r, "/admin?notice="+url.QueryEscape("Order "+number+" is now "+status+"."), http.StatusSeeOther)
}
