package refconnector

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/hitchdev/hitch/connector"
	"github.com/hitchdev/hitch/connector/browser"
)

// maxOrderPages bounds the order history walked in one refresh, against a
// site whose "next" link never ends.
const maxOrderPages = 1000

// orderListPage is what one page of the order history lists.
type orderListPage struct {
	Path string   `json:"path"` // where the browser is: /signin when the session has ended
	URLs []string `json:"urls"` // absolute order page URLs, in page order
	Next string   `json:"next"` // the absolute URL of the next page, "" on the last
}

const orderListJS = `(() => ({
  path: location.pathname,
  urls: Array.from(document.querySelectorAll('#orders tr.order a[href]'), (a) => a.href),
  next: (document.querySelector('a[rel="next"]') || {}).href || '',
}))()`

// Refresh reads every order (the history pages through the browser, then
// each order's page) and the subscriptions. A session the shop no longer
// knows gives connector.ErrLoggedOut.
func (s *Site) Refresh(ctx context.Context, sess *browser.Session) (*connector.Snapshot, error) {
	var urls []string
	seen := map[string]bool{}
	next := s.url("/orders")
	for page := 1; next != ""; page++ {
		if page > maxOrderPages {
			return nil, fmt.Errorf("refconnector: more than %d pages of orders", maxOrderPages)
		}
		var list orderListPage
		if err := sess.Run(ctx, fmt.Sprintf("orders page %d", page), browser.Navigate(next), evaluate(orderListJS, &list)); err != nil {
			return nil, err
		}
		if strings.HasPrefix(list.Path, "/signin") {
			return nil, connector.ErrLoggedOut
		}
		if list.Path != "/orders" {
			return nil, fmt.Errorf("%w: %s instead of the orders", errNoAccountPage, list.Path)
		}
		for _, u := range list.URLs {
			if !seen[u] {
				seen[u] = true
				urls = append(urls, u)
			}
		}
		next = list.Next
	}
	pages, err := readDetails(ctx, sess, urls)
	if err != nil {
		return nil, err
	}
	return pages.snapshot()
}

// readDetails reads the account page, the subscriptions page and the pages
// of the orders at urls from inside the signed-in page: the browser's own
// fetch (the session's cookies), all at once, each parsed with DOMParser.
func readDetails(ctx context.Context, sess *browser.Session, urls []string) (*detailPages, error) {
	arg, err := json.Marshal(urls)
	if err != nil {
		return nil, err
	}
	var pages detailPages
	err = sess.Run(ctx, "read orders and subscriptions", chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		v, err := chromedp.Evaluate[detailPages](detailsJS+`(`+string(arg)+`)`, chromedp.EvalAwaitPromise)(ctx, t)
		if err != nil {
			return err
		}
		// A 5xx page may pass: the whole step is tried again.
		if v.Failed != "" && v.Status >= 500 {
			return browser.Transient(fmt.Errorf("%s: status %d", v.Failed, v.Status))
		}
		pages = v
		return nil
	}))
	if err != nil {
		return nil, err
	}
	switch {
	case pages.LoggedOut:
		return nil, connector.ErrLoggedOut
	case pages.Failed != "":
		return nil, fmt.Errorf("refconnector: %s: status %d", pages.Failed, pages.Status)
	}
	return &pages, nil
}

// detailsJS is a function of the order page URLs that fetches and parses
// the pages. It returns what the pages show as text, for Go to map; a
// fetch that ends on the sign-in page sets loggedOut, and a page that
// failed sets failed (its path) and status.
const detailsJS = `(async (urls) => {
  const parser = new DOMParser();
  const text = (el, sel) => { const e = el.querySelector(sel); return e ? e.textContent.trim() : ''; };
  const attr = (el, sel, name) => { const e = el.querySelector(sel); return (e && e.getAttribute(name)) || ''; };
  const abs = (el, sel, name) => { const v = attr(el, sel, name); return v ? new URL(v, location.href).href : ''; };
  const get = async (url) => {
    for (let attempt = 0; ; attempt++) {
      const r = await fetch(url, {credentials: 'same-origin'});
      const path = new URL(r.url).pathname;
      if (path.startsWith('/signin')) return {loggedOut: true};
      if (r.status >= 500 && attempt < 2) {
        await new Promise((done) => setTimeout(done, 100 * (attempt + 1)));
        continue;
      }
      if (!r.ok) return {failed: new URL(url, location.href).pathname, status: r.status};
      return {url: r.url, doc: parser.parseFromString(await r.text(), 'text/html')};
    }
  };
  const order = (doc, url) => {
    const o = doc.querySelector('#order');
    if (!o) return null;
    const addr = doc.querySelector('#shipping-address');
    return {
      number: o.getAttribute('data-order-number') || '',
      url: url,
      datetime: attr(o, '#order-date', 'datetime'),
      status: attr(o, '#order-status', 'data-status'),
      items: Array.from(o.querySelectorAll('#order-items tr.item'), (tr) => ({
        sku: tr.getAttribute('data-sku') || '',
        name: text(tr, '.item-name'),
        url: abs(tr, 'a.item-name', 'href'),
        image_url: abs(tr, 'img.item-image', 'src'),
        quantity: text(tr, '.item-quantity'),
        unit_price: text(tr, '.item-unit-price'),
        line_total: text(tr, '.item-line-total'),
        seller: text(tr, '.seller-name'),
      })),
      subtotal: text(o, '#order-subtotal'),
      adjustments: Array.from(o.querySelectorAll('#order-summary tr.adjustment'), (tr) => ({
        kind: tr.getAttribute('data-kind') || '',
        label: text(tr, '.adjustment-label'),
        amount: text(tr, '.adjustment-amount'),
      })),
      total: text(o, '#order-total'),
      shipping: addr ? {
        first_name: text(addr, '.first-name'), last_name: text(addr, '.last-name'),
        line1: text(addr, '.line1'), line2: text(addr, '.line2'), city: text(addr, '.city'),
        region: text(addr, '.region'), postal_code: text(addr, '.postal-code'), country: text(addr, '.country'),
      } : null,
      payments: Array.from(o.querySelectorAll('#payments li.payment'), (li) => ({
        method: li.getAttribute('data-method') || '',
        brand: text(li, '.payment-brand'),
        last4: text(li, '.payment-last4'),
        amount: text(li, '.payment-amount'),
      })),
    };
  };
  const subscription = (el) => ({
    id: el.getAttribute('data-subscription-id') || '',
    family: el.getAttribute('data-family-plan') === 'true',
    name: text(el, '.plan-name'),
    description: text(el, '.plan-description'),
    price: text(el, '.plan-price'),
    cycle: text(el, '.plan-cycle'),
    cancels_on: attr(el, '.plan-cancels-on', 'datetime'),
    start: attr(el, '.plan-start', 'datetime'),
    last_billed: attr(el, '.plan-last-billed', 'datetime'),
    next_billing: attr(el, '.plan-next-billing', 'datetime'),
    cancel_instructions: text(el, '.plan-cancel-instructions'),
  });
  const pages = await Promise.all([get('/account'), get('/subscriptions'), ...urls.map(get)]);
  const out = {logged_out: false, failed: '', status: 0, tier: '', subscriptions: [], orders: []};
  for (const p of pages) {
    if (p.loggedOut) { out.logged_out = true; return out; }
    if (p.failed) { out.failed = p.failed; out.status = p.status; return out; }
  }
  const [account, subs, ...orders] = pages;
  if (!account.doc.querySelector('#account')) { out.failed = '/account'; return out; }
  out.tier = attr(account.doc, '#loyalty-tier', 'data-tier');
  if (!subs.doc.querySelector('#no-subscriptions, .subscription')) { out.failed = '/subscriptions'; return out; }
  out.subscriptions = Array.from(subs.doc.querySelectorAll('article.subscription'), subscription);
  for (const p of orders) {
    const o = order(p.doc, p.url);
    if (!o) { out.failed = new URL(p.url).pathname; return out; }
    out.orders.push(o);
  }
  return out;
})`

// detailPages is what detailsJS read.
type detailPages struct {
	LoggedOut     bool              `json:"logged_out"`
	Failed        string            `json:"failed"`
	Status        int               `json:"status"`
	Tier          string            `json:"tier"`
	Subscriptions []rawSubscription `json:"subscriptions"`
	Orders        []rawOrder        `json:"orders"`
}

// rawOrder is an order page as shown: money as "$1,234.56", the status as
// the shop words it.
type rawOrder struct {
	Number      string          `json:"number"`
	URL         string          `json:"url"`
	Datetime    string          `json:"datetime"`
	Status      string          `json:"status"`
	Items       []rawItem       `json:"items"`
	Subtotal    string          `json:"subtotal"`
	Adjustments []rawAdjustment `json:"adjustments"`
	Total       string          `json:"total"`
	Shipping    *rawAddress     `json:"shipping"`
	Payments    []rawPayment    `json:"payments"`
}

type rawItem struct {
	SKU       string `json:"sku"`
	Name      string `json:"name"`
	URL       string `json:"url"`
	ImageURL  string `json:"image_url"`
	Quantity  string `json:"quantity"`
	UnitPrice string `json:"unit_price"`
	LineTotal string `json:"line_total"`
	Seller    string `json:"seller"`
}

type rawAdjustment struct {
	Kind   string `json:"kind"`
	Label  string `json:"label"`
	Amount string `json:"amount"`
}

type rawAddress struct {
	FirstName  string `json:"first_name"`
	LastName   string `json:"last_name"`
	Line1      string `json:"line1"`
	Line2      string `json:"line2"`
	City       string `json:"city"`
	Region     string `json:"region"`
	PostalCode string `json:"postal_code"`
	Country    string `json:"country"`
}

type rawPayment struct {
	Method string `json:"method"`
	Brand  string `json:"brand"`
	Last4  string `json:"last4"`
	Amount string `json:"amount"`
}

// rawSubscription is a plan on the subscriptions page; dates are
// "2006-01-02".
type rawSubscription struct {
	ID                 string `json:"id"`
	Family             bool   `json:"family"`
	Name               string `json:"name"`
	Description        string `json:"description"`
	Price              string `json:"price"`
	Cycle              string `json:"cycle"`
	CancelsOn          string `json:"cancels_on"`
	Start              string `json:"start"`
	LastBilled         string `json:"last_billed"`
	NextBilling        string `json:"next_billing"`
	CancelInstructions string `json:"cancel_instructions"`
}

// snapshot maps the pages to what Hitch ingests.
func (p *detailPages) snapshot() (*connector.Snapshot, error) {
	snap := &connector.Snapshot{
		Transactions:  make([]connector.Transaction, 0, len(p.Orders)),
		Subscriptions: make([]connector.Subscription, 0, len(p.Subscriptions)),
	}
	var loyalty *connector.LoyaltyMembership
	if p.Tier != "" {
		loyalty = &connector.LoyaltyMembership{Tier: p.Tier}
	}
	for _, o := range p.Orders {
		tx, err := o.transaction(loyalty)
		if err != nil {
			return nil, fmt.Errorf("refconnector: order %s: %w", o.Number, err)
		}
		snap.Transactions = append(snap.Transactions, tx)
	}
	for _, rs := range p.Subscriptions {
		sub, err := rs.subscription()
		if err != nil {
			return nil, fmt.Errorf("refconnector: subscription %s: %w", rs.ID, err)
		}
		snap.Subscriptions = append(snap.Subscriptions, sub)
	}
	return snap, nil
}

// orderStatuses maps the shop's statuses to Hitch's.
var orderStatuses = map[string]string{
	"Ordered":        connector.StatusOrdered,
	"Shipped":        connector.StatusShipped,
	"Delivered":      connector.StatusDelivered,
	"Cancelled":      connector.StatusCancelled,
	"Returned":       connector.StatusReturned,
	"Refunded":       connector.StatusRefunded,
	"Payment failed": connector.StatusFailed,
}

// adjustmentTypes maps the shop's adjustment kinds to Hitch's.
var adjustmentTypes = map[string]string{
	"tax":      "TAX",
	"discount": "DISCOUNT",
	"shipping": "FEE",
	"refund":   "REFUND",
}

func (o rawOrder) transaction(loyalty *connector.LoyaltyMembership) (connector.Transaction, error) {
	placed, err := time.Parse(time.RFC3339, o.Datetime)
	if err != nil {
		return connector.Transaction{}, errors.New("the order date is not RFC 3339")
	}
	tx := connector.Transaction{
		ExternalID:        o.Number,
		Datetime:          placed.UTC().Format(time.RFC3339),
		URL:               o.URL,
		OrderStatus:       connector.StatusUnrecognized,
		PaymentMethods:    make([]connector.PaymentMethod, 0, len(o.Payments)),
		Products:          make([]connector.Product, 0, len(o.Items)),
		LoyaltyMembership: loyalty,
		Price:             connector.Price{Currency: "USD", Adjustments: make([]connector.Adjustment, 0, len(o.Adjustments))},
	}
	if st, ok := orderStatuses[o.Status]; ok {
		tx.OrderStatus = st
	}
	if tx.Price.SubTotal, err = amount(o.Subtotal); err != nil {
		return tx, fmt.Errorf("subtotal: %w", err)
	}
	if tx.Price.Total, err = amount(o.Total); err != nil {
		return tx, fmt.Errorf("total: %w", err)
	}
	for i, a := range o.Adjustments {
		amt, err := amount(a.Amount)
		if err != nil {
			return tx, fmt.Errorf("adjustment %d: %w", i, err)
		}
		typ, ok := adjustmentTypes[a.Kind]
		if !ok {
			typ = "UNRECOGNIZED"
		}
		tx.Price.Adjustments = append(tx.Price.Adjustments, connector.Adjustment{Type: typ, Label: a.Label, Amount: amt})
	}
	for i, it := range o.Items {
		p, err := it.product()
		if err != nil {
			return tx, fmt.Errorf("item %d: %w", i, err)
		}
		tx.Products = append(tx.Products, p)
	}
	for i, pm := range o.Payments {
		m, err := pm.paymentMethod()
		if err != nil {
			return tx, fmt.Errorf("payment %d: %w", i, err)
		}
		tx.PaymentMethods = append(tx.PaymentMethods, m)
	}
	if a := o.Shipping; a != nil {
		tx.Shipping = &connector.Shipping{Location: connector.Location{
			FirstName: a.FirstName, LastName: a.LastName,
			Address: connector.Address{Line1: a.Line1, Line2: a.Line2, City: a.City, Region: a.Region,
				PostalCode: a.PostalCode, Country: a.Country},
		}}
	}
	return tx, nil
}

func (it rawItem) product() (connector.Product, error) {
	qty, err := strconv.Atoi(it.Quantity)
	if err != nil || qty < 1 {
		return connector.Product{}, fmt.Errorf("quantity %q is not a positive number", it.Quantity)
	}
	unit, err := amount(it.UnitPrice)
	if err != nil {
		return connector.Product{}, fmt.Errorf("unit price: %w", err)
	}
	line, err := amount(it.LineTotal)
	if err != nil {
		return connector.Product{}, fmt.Errorf("line total: %w", err)
	}
	p := connector.Product{
		ExternalID: it.SKU, Name: it.Name, URL: it.URL, ImageURL: it.ImageURL, Quantity: qty,
		Price:       connector.ProductPrice{SubTotal: line, Total: line, UnitPrice: unit},
		Eligibility: []string{},
	}
	if it.Seller != "" {
		p.Seller = &connector.Seller{Name: it.Seller}
	}
	return p, nil
}

func (pm rawPayment) paymentMethod() (connector.PaymentMethod, error) {
	amt, err := amount(pm.Amount)
	if err != nil {
		return connector.PaymentMethod{}, err
	}
	m := connector.PaymentMethod{
		LastFour:          pm.Last4,
		Name:              pm.Brand + " ending in " + pm.Last4,
		TransactionAmount: amt,
	}
	switch pm.Method {
	case "card":
		m.Type, m.Brand = "CARD", brandCode(pm.Brand)
	case "gift_card":
		m.Type = "GIFT_CARD"
	default:
		m.Type = "UNRECOGNIZED"
	}
	return m, nil
}

// brandCode is Hitch's code of a card brand as the shop names it.
func brandCode(brand string) string {
	switch strings.ToLower(strings.TrimSpace(brand)) {
	case "visa":
		return "VISA"
	case "mastercard":
		return "MASTERCARD"
	case "american express", "amex":
		return "AMEX"
	case "discover":
		return "DISCOVER"
	}
	return strings.ToUpper(strings.TrimSpace(brand))
}

// subscriptionCycles maps the shop's billing cycles to Hitch's.
var subscriptionCycles = map[string]string{"Monthly": "MONTHLY", "Annual": "ANNUALLY"}

// subscription maps a plan. A cancelled plan that runs to its term is
// ACTIVE_CANCELLATION, expires on the day it cancels and does not renew.
func (rs rawSubscription) subscription() (connector.Subscription, error) {
	price, err := amount(rs.Price)
	if err != nil {
		return connector.Subscription{}, fmt.Errorf("price: %w", err)
	}
	var dates [4]string
	for i, d := range []string{rs.Start, rs.LastBilled, rs.NextBilling, rs.CancelsOn} {
		if d == "" && i < 3 {
			return connector.Subscription{}, errors.New("a date is missing")
		}
		if dates[i], err = day(d); err != nil {
			return connector.Subscription{}, err
		}
	}
	sub := connector.Subscription{
		ExternalID:         rs.ID,
		Name:               rs.Name,
		Description:        rs.Description,
		Status:             "ACTIVE",
		BillingCycle:       "UNRECOGNIZED",
		StartDate:          dates[0],
		LastBillingDate:    dates[1],
		NextBillingDate:    dates[2],
		NextRenewalDate:    dates[2],
		CancelInstructions: rs.CancelInstructions,
		IsPaid:             true,
		IsFamilyPlan:       rs.Family,
		IsCancellable:      true,
		Price:              connector.SubscriptionPrice{Total: price, Currency: "USD"},
	}
	if c, ok := subscriptionCycles[rs.Cycle]; ok {
		sub.BillingCycle = c
	}
	if dates[3] != "" {
		sub.Status, sub.NextRenewalDate, sub.ExpirationDate = "ACTIVE_CANCELLATION", "", &dates[3]
	}
	return sub, nil
}

// day turns a page's "2006-01-02" into RFC 3339 at midnight UTC; "" stays "".
func day(d string) (string, error) {
	if d == "" {
		return "", nil
	}
	t, err := time.Parse(time.DateOnly, d)
	if err != nil {
		return "", fmt.Errorf("date %q is not YYYY-MM-DD", d)
	}
	return t.UTC().Format(time.RFC3339), nil
}

// amount turns money as the shop shows it ("$1,234.56", "-$5.00") into
// Hitch's decimal string ("1234.56", "-5.00").
func amount(shown string) (string, error) {
	s := strings.TrimSpace(shown)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	s, ok := strings.CutPrefix(s, "$")
	if !ok {
		return "", fmt.Errorf("amount %q is not in dollars", shown)
	}
	s = strings.ReplaceAll(s, ",", "")
	whole, cents, ok := strings.Cut(s, ".")
	if !ok || whole == "" || len(cents) != 2 || !digits(whole) || !digits(cents) {
		return "", fmt.Errorf("amount %q is not dollars and cents", shown)
	}
	if neg && strings.Trim(whole+cents, "0") != "" {
		s = "-" + s
	}
	return s, nil
}

func digits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}
