package refshop

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"strings"
	"time"
)

// User is an account as the admin API shows it: everything a scraper can
// read on the account pages, for tests to compare field by field.
type User struct {
	Email           string         `json:"email"`
	Name            string         `json:"name"`
	Phone           string         `json:"phone"`
	TwoFactor       string         `json:"two_factor"` // none, email or question
	Question        string         `json:"question,omitempty"`
	CreatedAt       time.Time      `json:"created_at"`
	Tier            string         `json:"tier"` // Bronze, Silver or Gold
	Locked          bool           `json:"locked"`
	ShippingAddress Address        `json:"shipping_address"`
	Orders          []Order        `json:"orders"` // newest first
	Subscriptions   []Subscription `json:"subscriptions"`
	Cards           []Card         `json:"cards"`
}

// Order is one purchase. SubtotalCents is the sum of the items' line totals,
// TotalCents is SubtotalCents plus the adjustments, and the payments' amounts
// add up to TotalCents.
type Order struct {
	Number          string       `json:"number"`
	PlacedAt        time.Time    `json:"placed_at"`
	Status          string       `json:"status"`
	Items           []Item       `json:"items"`
	SubtotalCents   int64        `json:"subtotal_cents"`
	Adjustments     []Adjustment `json:"adjustments"`
	TotalCents      int64        `json:"total_cents"`
	ShippingAddress Address      `json:"shipping_address"`
	Payments        []Payment    `json:"payments"`
}

// Item is one line of an order.
type Item struct {
	Name           string `json:"name"`
	SKU            string `json:"sku"`
	URL            string `json:"url"`       // path of the product page on the site
	ImageURL       string `json:"image_url"` // path of the product image on the site
	Quantity       int    `json:"quantity"`
	UnitPriceCents int64  `json:"unit_price_cents"`
	LineTotalCents int64  `json:"line_total_cents"`
	Seller         string `json:"seller,omitempty"` // set for marketplace items
}

// Adjustment kinds.
const (
	AdjustTax      = "tax"
	AdjustDiscount = "discount" // negative
	AdjustShipping = "shipping"
	AdjustRefund   = "refund" // negative
)

// Adjustment is a line between the subtotal and the total.
type Adjustment struct {
	Kind        string `json:"kind"`
	Label       string `json:"label"`
	AmountCents int64  `json:"amount_cents"`
}

// Payment methods.
const (
	MethodCard     = "card"
	MethodGiftCard = "gift_card"
)

// Payment is what one payment method was charged for an order.
type Payment struct {
	Method      string `json:"method"`
	Brand       string `json:"brand,omitempty"` // cards only
	Last4       string `json:"last4"`
	AmountCents int64  `json:"amount_cents"`
}

// Address is a postal address.
type Address struct {
	FirstName  string `json:"first_name"`
	LastName   string `json:"last_name"`
	Line1      string `json:"line1"`
	Line2      string `json:"line2"`
	City       string `json:"city"`
	Region     string `json:"region"`
	PostalCode string `json:"postal_code"`
	Country    string `json:"country"`
}

// Subscription is a recurring plan. CancelsOn is set when the plan was
// cancelled and runs until then.
type Subscription struct {
	ID                 string     `json:"id"`
	Name               string     `json:"name"`
	Description        string     `json:"description"`
	PriceCents         int64      `json:"price_cents"`
	Cycle              string     `json:"cycle"` // Monthly or Annual
	CancelsOn          *time.Time `json:"cancels_on,omitempty"`
	StartedAt          time.Time  `json:"started_at"`
	LastBilledAt       time.Time  `json:"last_billed_at"`
	NextBillingAt      time.Time  `json:"next_billing_at"`
	CancelInstructions string     `json:"cancel_instructions"`
	FamilyPlan         bool       `json:"family_plan"`
}

// Card is a payment card on file: only what the shop keeps of it.
type Card struct {
	ID       string `json:"id"`
	Brand    string `json:"brand"`
	Last4    string `json:"last4"`
	ExpMonth int    `json:"exp_month"`
	ExpYear  int    `json:"exp_year"`
	Default  bool   `json:"default"`
}

// Order statuses, as the site shows them.
var statuses = []string{"Ordered", "Shipped", "Delivered", "Cancelled", "Returned", "Refunded", "Payment failed"}

func validStatus(s string) bool { return slices.Contains(statuses, s) }

// product is one entry of the catalog that generated orders draw from.
type product struct {
	SKU, Name   string
	PriceCents  int64
	Seller      string // marketplace seller; empty when the shop sells it
	Description string
}

var catalog = []product{
	{"RS-KTL-001", "Gooseneck Electric Kettle", 6999, "", "A 1-litre kettle with a precise pour spout."},
	{"RS-MUG-002", "Stoneware Mug, Set of 4", 3200, "", "Glazed mugs that keep coffee warm."},
	{"RS-BKP-003", "Commuter Backpack 22L", 8950, "", "Water-resistant with a padded laptop sleeve."},
	{"RS-HDP-004", "Wireless Headphones", 12900, "", "Noise cancelling, 30 hours of battery."},
	{"RS-LMP-005", "Brass Desk Lamp", 5400, "", "Warm light with a dimmer."},
	{"RS-SOC-006", "Merino Socks, 3 Pairs", 2400, "", "Soft, warm and hard-wearing."},
	{"RS-PAN-007", "Cast Iron Skillet 10\"", 3999, "", "Pre-seasoned and oven safe."},
	{"RS-NTB-008", "Dot Grid Notebook", 1450, "", "A5, 160 pages of 100 gsm paper."},
	{"RS-CBL-009", "USB-C Cable 2m", 1299, "", "Braided, 100 W charging."},
	{"RS-TEA-010", "Loose Leaf Green Tea", 1800, "", "Sencha from Shizuoka, 100 g."},
	{"RS-BTL-011", "Insulated Water Bottle", 2999, "", "Keeps drinks cold for 24 hours."},
	{"RS-PLW-012", "Linen Pillow Cover", 2750, "", "Stonewashed linen, 50 x 50 cm."},
	{"RS-KBD-013", "Mechanical Keyboard", 10900, "", "Tenkeyless with hot-swap switches."},
	{"RS-PLT-014", "Ceramic Planter", 3400, "", "With a drainage hole and saucer."},
	{"RS-UMB-015", "Compact Umbrella", 2200, "", "Wind-resistant, opens and closes with a button."},
	{"MP-CND-101", "Soy Candle, Cedar", 1900, "Northwind Candle Co.", "A 50-hour candle poured by hand."},
	{"MP-SCF-102", "Hand-Knit Scarf", 4500, "Fjord Knitwear", "Wool from Norwegian sheep."},
	{"MP-HNY-103", "Raw Wildflower Honey", 1650, "Meadow & Hive", "Unfiltered, 500 g jar."},
	{"MP-PST-104", "Art Print, A3", 3500, "Studio Lumen", "Giclée print on cotton paper."},
	{"MP-KNF-105", "Chef's Knife 8\"", 8900, "Okada Cutlery", "Forged VG-10 steel."},
}

func findProduct(sku string) (product, bool) {
	for _, p := range catalog {
		if p.SKU == sku {
			return p, true
		}
	}
	return product{}, false
}

func productURL(sku string) string { return "/products/" + sku }
func imageURL(sku string) string   { return "/images/" + sku + ".svg" }

// rngFor is a PRNG seeded from the parts, so that a user's generated data
// depends only on the e-mail (and what is asked for), never on the run.
func rngFor(parts ...string) *rand.Rand {
	h := fnv.New64a()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	sum := h.Sum64()
	return rand.New(rand.NewPCG(sum, sum^0x9e3779b97f4a7c15))
}

var firstNames = []string{"Grace", "Alan", "Edsger", "Barbara", "Ken", "Frances", "Donald", "Radia"}
var lastNames = []string{"Hopper", "Turing", "Dijkstra", "Liskov", "Thompson", "Allen", "Knuth", "Perlman"}

type place struct{ city, region, postal string }

var places = []place{
	{"Portland", "OR", "97205"}, {"Austin", "TX", "78701"}, {"Denver", "CO", "80202"},
	{"Madison", "WI", "53703"}, {"Raleigh", "NC", "27601"}, {"Burlington", "VT", "05401"},
}
var streets = []string{"Maple Ave", "Oak St", "Cedar Ln", "Pine Rd", "Elm St", "Birch Way"}

// addressFor is the user's shipping address, derived from the e-mail.
func addressFor(email, name string) Address {
	rng := rngFor(email, "address")
	first, last, _ := strings.Cut(name, " ")
	if last == "" {
		last = lastNames[rng.IntN(len(lastNames))]
	}
	p := places[rng.IntN(len(places))]
	a := Address{
		FirstName: first, LastName: last,
		Line1: fmt.Sprintf("%d %s", 100+rng.IntN(9800), streets[rng.IntN(len(streets))]),
		City:  p.city, Region: p.region, PostalCode: p.postal, Country: "US",
	}
	if rng.IntN(2) == 0 {
		a.Line2 = fmt.Sprintf("Apt %d", 1+rng.IntN(40))
	}
	return a
}

// nameFor makes a display name for a user created without one.
func nameFor(email string) string {
	rng := rngFor(email, "name")
	return firstNames[rng.IntN(len(firstNames))] + " " + lastNames[rng.IntN(len(lastNames))]
}

// orderFeature forces one trait onto a generated order, so that every user
// with enough orders shows each case a scraper must handle.
type orderFeature int

const (
	featureNone orderFeature = iota
	featureMarketplace
	featureRefundPartial
	featureCancelled
	featureGiftCardSplit
	featureReturned
	featurePaymentFailed
)

// featureAt is the trait forced on the order at index i (0 is the newest).
func featureAt(i int) orderFeature {
	switch i {
	case 2:
		return featureMarketplace
	case 3:
		return featureRefundPartial
	case 5:
		return featureCancelled
	case 6:
		return featureGiftCardSplit
	case 8:
		return featureReturned
	case 10:
		return featurePaymentFailed
	}
	return featureNone
}

// orderGen holds what generating a user's orders needs.
type orderGen struct {
	email   string
	now     time.Time
	since   time.Time // the account's creation
	cards   []Card
	address Address
	reserve func(number string) bool // claims an order number unless it is in use
}

// history makes n orders spread over the last two years (not before the
// account was created), newest first.
func (g orderGen) history(n int) []Order {
	rng := rngFor(g.email, "history")
	span := 730 * 24 * time.Hour
	if age := g.now.Sub(g.since) - time.Hour; age < span {
		span = max(age, time.Hour)
	}
	ages := make([]time.Duration, n)
	for i := range ages {
		ages[i] = time.Duration(rng.Int64N(int64(span)))
	}
	slices.Sort(ages)
	orders := make([]Order, 0, n)
	for i, age := range ages {
		placed := g.now.Add(-age).Truncate(time.Second)
		o := g.order(rngFor(g.email, "order", fmt.Sprint(i)), placed, featureAt(i))
		orders = append(orders, o)
	}
	return orders
}

// one makes a single new order placed in the last few hours; index makes
// it differ from the user's earlier ones.
func (g orderGen) one(index int) Order {
	rng := rngFor(g.email, "extra", fmt.Sprint(index))
	placed := g.now.Add(-time.Duration(rng.Int64N(int64(6 * time.Hour)))).Truncate(time.Second)
	return g.order(rng, placed, featureNone)
}

func (g orderGen) number(rng *rand.Rand) string {
	for {
		n := fmt.Sprintf("RS-%03d-%04d", 100+rng.IntN(900), 1000+rng.IntN(9000))
		if g.reserve(n) {
			return n
		}
	}
}

func (g orderGen) order(rng *rand.Rand, placed time.Time, f orderFeature) Order {
	o := Order{Number: g.number(rng), PlacedAt: placed.UTC(), ShippingAddress: g.address}

	// Items: distinct products, mostly one of each.
	picks := rng.Perm(len(catalog))[:1+rng.IntN(3)]
	hasSeller := false
	for _, p := range picks {
		hasSeller = hasSeller || catalog[p].Seller != ""
	}
	if f == featureMarketplace && !hasSeller {
		picks = append(picks, 15+rng.IntN(5))
	}
	for _, p := range picks {
		prod := catalog[p]
		qty := 1
		if rng.IntN(4) == 0 {
			qty = 2 + rng.IntN(2)
		}
		o.Items = append(o.Items, itemFor(prod, qty))
	}
	discount := rng.IntN(5) == 0
	o.Adjustments = pricing(sumLines(o.Items), discount)

	// Status follows the order's age unless a trait decides it.
	age := g.now.Sub(placed)
	switch {
	case f == featureCancelled:
		o.Status = "Cancelled"
	case f == featureReturned:
		o.Status = "Returned"
	case f == featurePaymentFailed:
		o.Status = "Payment failed"
	case f == featureRefundPartial:
		o.Status = "Refunded"
	case age < 2*24*time.Hour:
		o.Status = "Ordered"
	case age < 6*24*time.Hour:
		o.Status = "Shipped"
	default:
		switch r := rng.IntN(20); {
		case r == 0:
			o.Status = "Cancelled"
		case r == 1:
			o.Status = "Refunded"
			f = featureRefundPartial
		default:
			o.Status = "Delivered"
		}
	}
	o.SubtotalCents, o.TotalCents = totals(o.Items, o.Adjustments)

	// Payment: a card on file (or, without one, the user's card since
	// removed), sometimes with a gift card paying part.
	card := g.removedCard()
	if len(g.cards) > 0 {
		c := g.cards[rng.IntN(len(g.cards))]
		card.Brand, card.Last4 = c.Brand, c.Last4
	}
	gift := f == featureGiftCardSplit || (f == featureNone && rng.IntN(12) == 0)
	if gift && o.TotalCents > 100 {
		share := min(o.TotalCents/2/100*100, 5000) // whole dollars, at most $50
		if share == 0 {
			share = o.TotalCents / 2
		}
		o.Payments = []Payment{
			{Method: MethodGiftCard, Last4: fmt.Sprintf("%04d", rng.IntN(10000)), AmountCents: share},
			{Method: card.Method, Brand: card.Brand, Last4: card.Last4, AmountCents: o.TotalCents - share},
		}
	} else {
		card.AmountCents = o.TotalCents
		o.Payments = []Payment{card}
	}

	// A partial refund: the cheapest line back, taken off the payments
	// last first, which keep their methods.
	if f == featureRefundPartial {
		cheapest := o.Items[0]
		for _, it := range o.Items {
			if it.LineTotalCents < cheapest.LineTotalCents {
				cheapest = it
			}
		}
		refund := min(cheapest.LineTotalCents, o.TotalCents/2)
		if len(o.Items) == 1 {
			refund = o.TotalCents / 3
		}
		o.Adjustments = append(o.Adjustments, Adjustment{AdjustRefund, "Refund: " + cheapest.Name, -refund})
		o.SubtotalCents, o.TotalCents = totals(o.Items, o.Adjustments)
		for i := len(o.Payments) - 1; i >= 0 && refund > 0; i-- {
			take := min(refund, o.Payments[i].AmountCents)
			o.Payments[i].AmountCents -= take
			refund -= take
		}
	}
	return o
}

// removedCard is the card a user without cards on file paid with.
func (g orderGen) removedCard() Payment {
	rng := rngFor(g.email, "removed card")
	brand := []string{"Visa", "Mastercard", "American Express", "Discover"}[rng.IntN(4)]
	return Payment{Method: MethodCard, Brand: brand, Last4: fmt.Sprintf("%04d", rng.IntN(10000))}
}

func itemFor(p product, qty int) Item {
	return Item{
		Name: p.Name, SKU: p.SKU, URL: productURL(p.SKU), ImageURL: imageURL(p.SKU),
		Quantity: qty, UnitPriceCents: p.PriceCents, LineTotalCents: p.PriceCents * int64(qty), Seller: p.Seller,
	}
}

// pricing is the discount, shipping and tax lines for a subtotal.
func pricing(subtotal int64, discount bool) []Adjustment {
	var adj []Adjustment
	taxable := subtotal
	if discount {
		d := (subtotal + 5) / 10
		adj = append(adj, Adjustment{AdjustDiscount, "Promotion (SAVE10)", -d})
		taxable -= d
	}
	if subtotal < 3500 {
		adj = append(adj, Adjustment{AdjustShipping, "Shipping", 599})
	}
	adj = append(adj, Adjustment{AdjustTax, "Estimated tax", (taxable*825 + 5000) / 10000})
	return adj
}

func sumLines(items []Item) int64 {
	var s int64
	for _, it := range items {
		s += it.LineTotalCents
	}
	return s
}

func totals(items []Item, adj []Adjustment) (subtotal, total int64) {
	subtotal = sumLines(items)
	total = subtotal
	for _, a := range adj {
		total += a.AmountCents
	}
	return subtotal, total
}

// checkOrder reports the first broken invariant of an order, or nil.
func checkOrder(o Order) error {
	if len(o.Items) == 0 {
		return fmt.Errorf("an order needs at least one item")
	}
	for _, it := range o.Items {
		if it.Quantity < 1 || it.UnitPriceCents < 0 {
			return fmt.Errorf("item %s: quantity must be at least 1 and the price not negative", it.SKU)
		}
		if it.LineTotalCents != it.UnitPriceCents*int64(it.Quantity) {
			return fmt.Errorf("item %s: line total %d is not quantity times unit price", it.SKU, it.LineTotalCents)
		}
	}
	sub, total := totals(o.Items, o.Adjustments)
	if o.SubtotalCents != sub {
		return fmt.Errorf("subtotal %d is not the sum of the line totals %d", o.SubtotalCents, sub)
	}
	if o.TotalCents != total {
		return fmt.Errorf("total %d is not the subtotal plus the adjustments %d", o.TotalCents, total)
	}
	if total < 0 {
		return fmt.Errorf("total %d is negative", total)
	}
	var paid int64
	for _, p := range o.Payments {
		if p.AmountCents < 0 {
			return fmt.Errorf("payment amount %d is negative", p.AmountCents)
		}
		paid += p.AmountCents
	}
	if len(o.Payments) == 0 || paid != total {
		return fmt.Errorf("payments add up to %d, not the total %d", paid, total)
	}
	return nil
}

// subscriptionsFor makes the plans of a user: Shop Plus, and with family
// also an annual family plan that was cancelled and runs to its term.
func subscriptionsFor(email string, now, since time.Time, family bool) []Subscription {
	rng := rngFor(email, "subscriptions")
	months := 1 + rng.IntN(18)
	start := now.AddDate(0, -months, -rng.IntN(27)).Truncate(24 * time.Hour)
	if start.Before(since) {
		start = since.Truncate(24 * time.Hour)
	}
	last, next := billingDates(start, now, 0, 1)
	plus := Subscription{
		ID:                 fmt.Sprintf("sub_%06d", rng.IntN(1000000)),
		Name:               "Shop Plus",
		Description:        "Free two-day shipping and member prices on thousands of items.",
		PriceCents:         1299,
		Cycle:              "Monthly",
		StartedAt:          start,
		LastBilledAt:       last,
		NextBillingAt:      next,
		CancelInstructions: "Cancel any time under Account, Subscriptions, Shop Plus, Cancel plan. You keep the benefits until the end of the billing period.",
	}
	subs := []Subscription{plus}
	if family {
		fstart := now.AddDate(-1, -rng.IntN(6), 0).Truncate(24 * time.Hour)
		if fstart.Before(since) {
			fstart = since.Truncate(24 * time.Hour)
		}
		flast, fnext := billingDates(fstart, now, 1, 0)
		cancels := fnext
		subs = append(subs, Subscription{
			ID:                 fmt.Sprintf("sub_%06d", rng.IntN(1000000)),
			Name:               "Shop Plus Family",
			Description:        "Shop Plus for up to five people in one household.",
			PriceCents:         17900,
			Cycle:              "Annual",
			CancelsOn:          &cancels,
			StartedAt:          fstart,
			LastBilledAt:       flast,
			NextBillingAt:      fnext,
			CancelInstructions: "Cancelled plans run until the end of the year paid for. To keep the plan, choose Resume plan before then.",
			FamilyPlan:         true,
		})
	}
	return subs
}

// billingDates steps from start by the cycle to the last billing date not
// after now and the one after it.
func billingDates(start, now time.Time, years, months int) (last, next time.Time) {
	last = start
	for k := 1; ; k++ {
		d := start.AddDate(years*k, months*k, 0)
		if d.After(now) {
			return last, d
		}
		last = d
	}
}

// tierFor is the loyalty tier from what a user spent on orders that went
// through.
func tierFor(orders []Order) string {
	var spent int64
	for _, o := range orders {
		if o.Status != "Cancelled" && o.Status != "Payment failed" {
			spent += o.TotalCents
		}
	}
	switch {
	case spent >= 50000:
		return "Gold"
	case spent >= 10000:
		return "Silver"
	}
	return "Bronze"
}
