package simulate

import (
	"fmt"
	"strings"
)

// shelf describes what a store sells and how it charges for delivery.
type shelf struct {
	goods      []good
	minItems   int
	maxItems   int
	sellers    []string // marketplace sellers; nil when the store sells everything itself
	sellerOdds float64
	freeShipAt int64 // sub-total from which shipping is free
	shipFee    int64
	variants   bool // apparel: every product has a colour and size
	autoship   bool // pet supplies: repeat-delivery discount
}

var (
	colors = []string{"Black", "White", "Navy", "Heather Grey", "Olive", "Burgundy", "Sand", "Dusty Rose"}
	sizes  = []string{"XS", "S", "M", "M", "L", "L", "XL", "XXL"}
	shoes  = []string{"7", "8", "8.5", "9", "9.5", "10", "10.5", "11", "12"}
)

// parcel builds a basket of shelf goods sent by parcel (or collected at the
// store when the profile allows), with shipping fees, coupons and tax.
func parcel(s shelf) func(g *gen, d *draft) {
	return func(g *gen, d *draft) {
		r := g.r
		for _, i := range r.Perm(len(s.goods))[:min(int(between(r, int64(s.minItems), int64(s.maxItems))), len(s.goods))] {
			gd := s.goods[i]
			if s.variants {
				size := pick(r, sizes)
				if strings.Contains(gd.name, "Shoe") || strings.Contains(gd.desc, "shoes") ||
					strings.Contains(gd.name, "Boot") || strings.Contains(gd.name, "Air Force") {
					size = pick(r, shoes)
				}
				gd.name = fmt.Sprintf("%s, %s, Size %s", gd.name, pick(r, colors), size)
			}
			l := g.add(d, gd, quantity(r, gd))
			if s.sellers != nil && chance(r, s.sellerOdds) {
				l.seller = g.seller(gd.name, s.sellers)
			}
		}
		sub := d.subTotal()
		member := g.a.loyalty != nil
		if d.fulfil == fulfilShip && sub < s.freeShipAt && !member {
			d.fee("Shipping & handling", s.shipFee)
		}
		switch {
		case s.autoship && chance(r, 0.45):
			d.discount("Autoship savings (5%)", percent(sub, 5))
		case member && chance(r, 0.25):
			d.discount(g.a.program+" member savings", percent(sub, pick(r, []float64{5, 10})))
		case chance(r, 0.1):
			d.discount("Promo code SAVE10", percent(sub, 10))
		case sub > 5000 && chance(r, 0.05):
			d.discount("Coupon: $10 off $50", 1000)
		}
		if chance(r, 0.03) {
			d.fee("Gift wrap", 499)
		}
	}
}

// grocery builds a supermarket basket: produce, dairy, pantry and
// household, with a delivery fee and tip when delivered, loyalty savings,
// and tax on the taxable items only.
func grocery(house string, bulk bool) func(g *gen, d *draft) {
	return func(g *gen, d *draft) {
		r := g.r
		if bulk {
			for _, i := range r.Perm(len(bulkGoods))[:between(r, 4, 14)] {
				gd := bulkGoods[i]
				if strings.Contains(gd.name, "%s") {
					gd.name = fmt.Sprintf(gd.name, house)
				}
				g.add(d, gd, quantity(r, gd))
			}
		} else {
			g.pickGoods(d, produce, int(between(r, 3, 8)))
			g.pickGoods(d, dairyAndBakery, int(between(r, 2, 5)))
			g.pickGoods(d, meatAndPantry, int(between(r, 2, 8)))
			if chance(r, 0.5) {
				g.pickGoods(d, household, int(between(r, 1, 3)))
			}
			if house != "" {
				for _, i := range r.Perm(len(houseGoods))[:between(r, 1, 4)] {
					gd := houseGoods[i]
					gd.name = fmt.Sprintf(gd.name, house)
					g.add(d, gd, quantity(r, gd))
				}
			}
		}
		sub := d.subTotal()
		switch {
		case g.a.loyalty != nil && chance(r, 0.6):
			d.discount(g.a.program+" savings", percent(sub, float64(between(r, 3, 12))))
		case chance(r, 0.12):
			d.discount("Digital coupons", between(r, 100, 600))
		}
		if d.fulfil == fulfilDeliver {
			if g.a.loyalty == nil || sub < 3500 {
				d.fee("Delivery fee", pick(r, []int64{399, 499, 599, 799, 999}))
			}
			if g.a.m.Domain == "instacart.com" {
				d.fee("Service fee", max(percent(sub, 5), 199))
			}
			if chance(r, 0.85) {
				d.tip("Driver tip", max(percent(sub, pick(r, []float64{5, 10, 15})), 300))
			}
		}
		if chance(r, 0.15) && d.fulfil == fulfilPickup {
			d.fee("Bag fee", int64(between(r, 2, 8))*10)
		}
	}
}

// pharmacy builds a drugstore basket: over-the-counter items, many of them
// FSA/HSA-eligible, and sometimes a prescription with its copay.
func pharmacy(g *gen, d *draft) {
	r := g.r
	if chance(r, 0.85) {
		g.pickGoods(d, pharmacyGoods, int(between(r, 1, 5)))
	}
	if len(d.lines) == 0 || chance(r, 0.35) {
		g.addPrescription(d)
	}
	sub := d.subTotal()
	switch {
	case g.a.loyalty != nil && chance(r, 0.4):
		d.discount(g.a.program+" savings", percent(sub, float64(between(r, 5, 20))))
	case g.a.m.Domain == "cvs.com" && chance(r, 0.08):
		d.discount("ExtraBucks Rewards", min(500, sub/2))
	case chance(r, 0.06):
		d.discount("Digital coupon", min(between(r, 100, 400), sub/2))
	}
	if d.fulfil == fulfilShip && sub < 3500 {
		d.fee("Shipping", 599)
	}
}

// addPrescription adds a filled prescription: its copay, never taxed,
// always FSA/HSA-eligible.
func (g *gen) addPrescription(d *draft) {
	g.addRx(d, pick(g.r, prescriptions))
}

func (g *gen) addRx(d *draft, rx good) {
	num := randString(g.r, digits, 7)
	d.addLine(line{
		sku:  "RX" + num,
		name: "Rx " + num + ": " + rx.name,
		desc: strings.TrimPrefix(rx.desc+". Prescription copay", ". "),
		qty:  1,
		unit: charm(g.r, rx.lo, rx.hi),
		fsa:  true,
	})
}

// mailPharmacy builds a mail-order pharmacy shipment of 90-day supplies.
func mailPharmacy(g *gen, d *draft) {
	for range between(g.r, 1, 3) {
		rx := pick(g.r, prescriptions)
		if strings.Contains(rx.name, "Amoxicillin") {
			continue // a short course is filled at a local pharmacy
		}
		g.addRx(d, rx)
		d.lines[len(d.lines)-1].name += " (90-day supply)"
		d.lines[len(d.lines)-1].unit *= 2
	}
	if len(d.lines) == 0 {
		g.addRx(d, prescriptions[0])
	}
}

// discountCard builds a prescription paid at a partner pharmacy with a
// coupon from the merchant.
func discountCard(g *gen, d *draft) {
	g.addPrescription(d)
	l := &d.lines[0]
	l.unit += between(g.r, 2000, 12000) // the retail price before the coupon
	l.desc = "Filled at " + pick(g.r, []string{"CVS Pharmacy", "Walgreens", "Rite Aid", "Kroger Pharmacy", "Walmart Pharmacy"})
	d.discount("GoodRx coupon savings", l.unit-charm(g.r, 800, 2500))
}

// servicePros are the pros of the home-services marketplace, by service.
var servicePros = map[string][]string{
	"Handyman service, 2 hours":       {"Reliable Handyman Services", "Mr. Fix-It Pros"},
	"House cleaning, 3 bedroom":       {"Sparkle Clean Co.", "Fresh Nest Cleaning"},
	"Lawn mowing and edging":          {"GreenLeaf Lawn Care", "Cutting Edge Landscaping"},
	"Gutter cleaning":                 {"Brightside Gutter Pros", "Clear Flow Gutters"},
	"HVAC tune-up":                    {"Comfort Air HVAC", "Polar Bear Heating & Cooling"},
	"Furniture assembly":              {"Precision Furniture Assembly", "Flat Pack Heroes"},
	"Carpet cleaning, 3 rooms":        {"FreshStart Carpet Care", "Stanley Steemer"},
	"Plumbing repair, leaking faucet": {"All-Pro Plumbing", "Roto-Rooter"},
}

// homeService builds a booked home service done by a pro of the
// marketplace.
func homeService(g *gen, d *draft) {
	gd := pick(g.r, homeServices)
	l := g.add(d, gd, 1)
	if pros := servicePros[gd.name]; len(pros) > 0 {
		l.seller = g.seller(gd.name+randString(g.r, digits, 1), pros)
	}
	d.fee("Booking fee", between(g.r, 299, 999))
	if chance(g.r, 0.4) {
		d.tip("Tip for your pro", percent(d.subTotal(), pick(g.r, []float64{10, 15, 20})))
	}
}
