package simulate

import (
	"math"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/hitchdev/hitch/internal/transaction"
)

// fulfilment is how an order reaches the customer; it decides the statuses
// an order can take and whether it has shipping data.
type fulfilment int

const (
	fulfilShip    fulfilment = iota // a parcel sent to an address
	fulfilDeliver                   // a courier within hours (meals, groceries)
	fulfilPickup                    // collected at a store
	fulfilService                   // used in person: rides, stays, flights, home services
	fulfilDigital                   // a charge for something online, or a bill
)

// URL markers that let Update tell the fulfilment of an order it did not
// build: a courier delivery ("?fulfillment=delivery") and a ride ("/trips/").
const (
	deliveryQuery = "?fulfillment=delivery"
	pickupQuery   = "?fulfillment=pickup"
	ridePath      = "trips"
)

// gen is the state of one Transactions call.
type gen struct {
	r   *rand.Rand
	a   *account
	now time.Time
}

// draft is an order being built, with money in cents.
type draft struct {
	when     time.Time
	status   string
	lines    []line
	adjs     []adj // discounts, fees and tips; tax is computed on assembly
	taxBP    int64 // tax rate in basis points on the taxable lines
	taxLabel string
	fulfil   fulfilment
	path     string // the order URL's path segment, such as "orders"
	giftOdds float64
	// recipient overrides the account holder on a shipped order (a gift).
	recipient *transaction.Location
}

// line is one product of a draft.
type line struct {
	sku, name, desc string
	qty, unit       int64
	taxable, fsa    bool
	physical        bool // a parcel even in a store of digital goods
	seller          *transaction.Seller
}

// adj is an adjustment in cents: positive for fees and tips, positive
// magnitude for discounts (negated on assembly).
type adj struct {
	typ, label string
	cents      int64
}

// add puts qty of good on the draft at a price drawn from its range.
func (g *gen) add(d *draft, gd good, qty int64) *line {
	return d.addLine(line{
		sku:      g.sku(gd.name),
		name:     gd.name,
		desc:     gd.desc,
		qty:      qty,
		unit:     charm(g.r, gd.lo, gd.hi),
		taxable:  gd.flags&taxed != 0,
		fsa:      gd.flags&fsaEligible != 0,
		physical: gd.flags&shipped != 0,
	})
}

func (d *draft) addLine(l line) *line {
	if l.qty < 1 {
		l.qty = 1
	}
	if l.unit < 1 {
		l.unit = 1
	}
	d.lines = append(d.lines, l)
	return &d.lines[len(d.lines)-1]
}

// quantity draws how many of gd a basket holds: mostly one.
func quantity(r *rand.Rand, gd good) int64 {
	if gd.maxQty <= 1 || chance(r, 0.6) {
		return 1
	}
	return between(r, 2, int64(gd.maxQty))
}

// pickGoods adds k distinct goods of list (fewer when the list is short).
func (g *gen) pickGoods(d *draft, list []good, k int) {
	for _, i := range g.r.Perm(len(list))[:min(k, len(list))] {
		g.add(d, list[i], quantity(g.r, list[i]))
	}
}

func (d *draft) subTotal() int64 {
	var s int64
	for _, l := range d.lines {
		s += l.qty * l.unit
	}
	return s
}

func (d *draft) fee(label string, cents int64) {
	if cents > 0 {
		d.adjs = append(d.adjs, adj{"FEE", label, cents})
	}
}

func (d *draft) tip(label string, cents int64) {
	if cents > 0 {
		d.adjs = append(d.adjs, adj{"TIP", label, cents})
	}
}

func (d *draft) discount(label string, cents int64) {
	if cents > 0 {
		d.adjs = append(d.adjs, adj{"DISCOUNT", label, cents})
	}
}

// charm draws a price in [lo, hi] cents; in wide ranges it ends like shelf
// prices do (.99, .49, ...).
func charm(r *rand.Rand, lo, hi int64) int64 {
	v := between(r, lo, hi)
	if hi-lo >= 100 {
		c := v - v%100 + pick(r, []int64{99, 99, 49, 79, 29, 0, 97, 89})
		if c >= lo && c <= hi && c > 0 {
			return c
		}
	}
	return v
}

// percent returns p percent of cents, rounded half up, in integer
// arithmetic so that every platform computes the same cents.
func percent(cents int64, p float64) int64 {
	return applyRate(cents, int64(math.Round(p*100)))
}

// applyRate returns cents × bp / 10000, rounded half up.
func applyRate(cents, bp int64) int64 {
	return (cents*bp + 5000) / 10000
}

// assemble turns d into a transaction: it caps the discounts below the
// sub-total, computes the tax, the total and the payment methods.
func (g *gen) assemble(d *draft, externalID string) transaction.Transaction {
	a := g.a
	sub := d.subTotal()
	var taxable int64
	for _, l := range d.lines {
		if l.taxable {
			taxable += l.qty * l.unit
		}
	}
	var discounts, fees, tips int64
	var adjustments []transaction.Adjustment
	for _, x := range d.adjs {
		if x.typ == "DISCOUNT" {
			x.cents = min(x.cents, sub-1-discounts)
			if x.cents <= 0 {
				continue
			}
			discounts += x.cents
			adjustments = append(adjustments, transaction.Adjustment{Type: x.typ, Label: x.label,
				Amount: transaction.FormatCents(-x.cents)})
		}
	}
	for _, x := range d.adjs {
		if x.typ == "FEE" {
			fees += x.cents
			adjustments = append(adjustments, transaction.Adjustment{Type: x.typ, Label: x.label,
				Amount: transaction.FormatCents(x.cents)})
		}
	}
	var tax int64
	if d.taxBP > 0 && taxable > 0 {
		// Discounts lower the taxed amount in proportion to the taxed share.
		tax = applyRate(taxable-discounts*taxable/sub, d.taxBP)
		if tax > 0 {
			label := d.taxLabel
			if label == "" {
				label = "Sales tax"
			}
			adjustments = append(adjustments, transaction.Adjustment{Type: "TAX", Label: label,
				Amount: transaction.FormatCents(tax)})
		}
	}
	for _, x := range d.adjs {
		if x.typ == "TIP" {
			tips += x.cents
			adjustments = append(adjustments, transaction.Adjustment{Type: x.typ, Label: x.label,
				Amount: transaction.FormatCents(x.cents)})
		}
	}
	if adjustments == nil {
		adjustments = []transaction.Adjustment{}
	}
	total := sub - discounts + fees + tax + tips

	t := transaction.Transaction{
		ExternalID:     externalID,
		Datetime:       d.when,
		URL:            a.base + "/" + d.path + "/" + externalID,
		OrderStatus:    d.status,
		PaymentMethods: a.pay(g.r, total, d.giftOdds),
		Price: transaction.Price{SubTotal: transaction.FormatCents(sub), Adjustments: adjustments,
			Total: transaction.FormatCents(total), Currency: "USD"},
		Products: make([]transaction.Product, 0, len(d.lines)),
	}
	switch d.fulfil {
	case fulfilDeliver:
		t.URL += deliveryQuery
	case fulfilPickup:
		t.URL += pickupQuery
	}
	if d.fulfil == fulfilShip || d.fulfil == fulfilDeliver {
		loc := transaction.Location{Address: a.home, FirstName: a.first, LastName: a.last}
		if d.recipient != nil {
			loc = *d.recipient
		}
		t.Shipping = &transaction.Shipping{Location: loc}
	}
	if a.loyalty != nil {
		t.LoyaltyMembership = &transaction.LoyaltyMembership{Tier: a.loyalty.Tier}
	}
	for _, l := range d.lines {
		t.Products = append(t.Products, g.product(l))
	}
	return t
}

// product renders a line with its merchant URLs.
func (g *gen) product(l line) transaction.Product {
	base := g.a.base
	url := base + "/p/" + slug(l.name) + "/" + l.sku
	if g.a.m.Domain == "amazon.com" {
		url = base + "/dp/" + l.sku
	}
	p := transaction.Product{
		ExternalID:  l.sku,
		Name:        l.name,
		Description: l.desc,
		URL:         url,
		ImageURL:    base + "/images/products/" + l.sku + ".jpg",
		Quantity:    int(l.qty),
		Price: transaction.ProductPrice{
			SubTotal:  transaction.FormatCents(l.qty * l.unit),
			Total:     transaction.FormatCents(l.qty * l.unit),
			UnitPrice: transaction.FormatCents(l.unit),
		},
		Seller:      l.seller,
		Eligibility: []string{},
	}
	if l.fsa {
		p.Eligibility = []string{"FSA/HSA"}
	}
	return p
}

// sku is the merchant's stable identifier of a product name, in the style
// of the merchant where it has a well-known one.
func (g *gen) sku(name string) string {
	h := stableHash(g.a.m.Domain, name)
	switch g.a.m.Domain {
	case "amazon.com":
		return "B0" + hashString(h, upperNum, 8)
	case "target.com":
		return "A-" + hashString(h, digits, 8)
	case "walmart.com":
		return hashString(h, digits, 10)
	}
	return hashString(h, digits, 9)
}

// seller returns the marketplace seller of a product: the same name always
// gets the same seller.
func (g *gen) seller(product string, names []string) *transaction.Seller {
	h := stableHash(g.a.m.Domain, "seller", product)
	name := names[h%uint64(len(names))]
	base := g.a.base
	var url string
	switch g.a.m.Domain {
	case "amazon.com":
		url = base + "/sp?seller=A" + hashString(stableHash(name), upperNum, 13)
	case "ebay.com":
		url = base + "/str/" + slug(name)
	case "etsy.com":
		url = base + "/shop/" + name
	case "walmart.com":
		url = base + "/seller/" + hashString(stableHash(name), digits, 6)
	default:
		url = base + "/store/" + slug(name)
	}
	return &transaction.Seller{Name: name, URL: url}
}

// slug is a lower-case URL path segment for name.
func slug(name string) string {
	var b strings.Builder
	dash := false
	for _, c := range strings.ToLower(name) {
		switch {
		case 'a' <= c && c <= 'z' || '0' <= c && c <= '9':
			b.WriteRune(c)
			dash = false
		case !dash && b.Len() > 0:
			b.WriteByte('-')
			dash = true
		}
		if b.Len() >= 60 {
			break
		}
	}
	return strings.TrimSuffix(b.String(), "-")
}

// idPrefix is three upper-case letters from the merchant's domain.
func idPrefix(domain string) string {
	var b strings.Builder
	for _, c := range strings.ToUpper(domain) {
		if 'A' <= c && c <= 'Z' {
			b.WriteRune(c)
			if b.Len() == 3 {
				break
			}
		}
	}
	return b.String()
}
