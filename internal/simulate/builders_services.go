package simulate

import (
	"fmt"
	"strings"
	"time"

	"github.com/hitchdev/hitch/internal/transaction"
)

// foodApp builds a delivery-app order from one restaurant, which the app
// shows as the seller of every dish.
func foodApp(g *gen, d *draft) {
	r := g.r
	rest := pick(r, restaurants)
	g.pickGoods(d, rest.dishes, int(between(r, 1, 3)))
	seller := &transaction.Seller{Name: rest.name, URL: g.a.base + "/store/" + slug(rest.name)}
	for i := range d.lines {
		d.lines[i].seller = seller
	}
	mealFees(g, d, true)
}

// chain builds an order placed with a restaurant chain directly.
func chain(menu []good) func(g *gen, d *draft) {
	return func(g *gen, d *draft) {
		g.pickGoods(d, menu, int(between(g.r, 1, 4)))
		mealFees(g, d, false)
	}
}

// mealFees adds what a meal order costs beyond the food: delivery and
// service fees, a courier tip, a promotion now and then.
func mealFees(g *gen, d *draft, app bool) {
	r := g.r
	sub := d.subTotal()
	member := g.a.loyalty != nil
	if d.fulfil == fulfilDeliver {
		if !member || sub < 1200 {
			d.fee("Delivery fee", pick(r, []int64{99, 199, 299, 399, 499, 599}))
		}
		if app {
			d.fee("Service fee", min(max(percent(sub, 15), 200), 1200))
			if sub < 1000 {
				d.fee("Small order fee", 200)
			}
		}
		if chance(r, 0.85) {
			tip := max(percent(sub, pick(r, []float64{15, 18, 20, 25})), 200)
			d.tip(pick(r, []string{"Courier tip", "Dasher tip", "Driver tip"}), tip/25*25)
		}
	} else if chance(r, 0.2) {
		d.tip("Tip", pick(r, []int64{100, 200, 300}))
	}
	switch {
	case member && app && chance(r, 0.3):
		d.discount(g.a.program+" savings", percent(sub, 5))
	case sub >= 2500 && chance(r, 0.12):
		d.discount("Promotion: $5 off $25+", 500)
	case g.a.loyalty != nil && chance(r, 0.1):
		d.discount("Reward redeemed", min(sub/2, pick(r, []int64{300, 500, 700})))
	}
}

// ride builds one trip: the fare as the only product, booking and airport
// fees, an optional tip, and a small fee alone when the rider canceled.
func ride(g *gen, d *draft) {
	r := g.r
	services, ok := rideServices[g.a.m.Domain]
	if !ok {
		services = []choice[good]{{good{g.a.m.Name + " ride", 900, 4800, 1, untaxed, ""}, 1}}
	}
	svc := pickWeighted(r, services)
	d.taxBP = 0
	if d.status == transaction.StatusCancelled {
		d.addLine(line{sku: g.sku(svc.name), name: svc.name + " (canceled)",
			desc: "Canceled by rider after the driver was on the way", qty: 1, unit: charm(r, 500, 1000)})
		return
	}
	from, to := pick(r, cityPlaces), pick(r, cityPlaces)
	for to == from {
		to = pick(r, cityPlaces)
	}
	// The explicit conversions round each product, so no platform fuses a
	// multiply-add and the same seed gives the same trip everywhere.
	miles := 1 + float64(r.Float64()*23)
	minutes := int(miles*2.2) + r.IntN(12) + 4
	fare := svc.lo + int64(float64(svc.hi-svc.lo)*miles/24) + between(r, -150, 150)
	d.addLine(line{sku: g.sku(svc.name), name: svc.name,
		desc: fmt.Sprintf("%s → %s · %.1f mi · %d min", from, to, miles, minutes), qty: 1, unit: max(fare, svc.lo)})
	if g.a.m.Domain == "lyft.com" {
		d.fee("Service fee", between(r, 150, 350))
	} else {
		d.fee("Booking fee", between(r, 100, 350))
	}
	if from == "Airport" || to == "Airport" {
		d.fee("Airport surcharge", 500)
	}
	if chance(r, 0.08) {
		d.fee("Wait time fee", between(r, 30, 300))
	}
	switch {
	case g.a.loyalty != nil && chance(r, 0.5):
		d.discount(g.a.program+" savings", percent(d.subTotal(), 6))
	case chance(r, 0.07):
		d.discount("Promotion: 20% off", min(percent(d.subTotal(), 20), 500))
	}
	if chance(r, 0.55) {
		d.tip("Tip", pick(r, []int64{100, 200, 300, 400, 500, 800, percent(d.subTotal(), 18)}))
	}
}

// scooter builds a per-minute scooter or bike rental.
func scooter(g *gen, d *draft) {
	r := g.r
	gd := pick(r, micromobility)
	d.taxBP = 0
	if d.status == transaction.StatusCancelled {
		d.addLine(line{sku: g.sku(gd.name), name: gd.name + " (canceled)", desc: "Ended within 30 seconds: unlock fee only", qty: 1, unit: 100})
		return
	}
	minutes := between(r, 4, 35)
	d.addLine(line{sku: g.sku(gd.name), name: gd.name,
		desc: fmt.Sprintf("%d min · %.1f mi", minutes, float64(float64(minutes)*0.18)+r.Float64()), qty: minutes, unit: between(r, gd.lo, gd.hi)})
	d.fee("Unlock fee", 100)
	if chance(r, 0.1) {
		d.fee("Local government fee", 10*minutes/5+10)
	}
}

// stay builds a short-term rental booking with cleaning and service fees
// and occupancy tax.
func stay(serviceFee float64) func(g *gen, d *draft) {
	return func(g *gen, d *draft) {
		r := g.r
		place := pick(r, stays)
		nights := between(r, 2, 7)
		checkIn := d.when.AddDate(0, 0, int(between(r, 7, 90)))
		d.addLine(line{sku: g.sku(place), name: place,
			desc: fmt.Sprintf("Check-in %s · %d nights · %s", checkIn.Format("Jan 2, 2006"), nights, plural(between(r, 1, 6), "guest")),
			qty:  nights, unit: charm(r, 8900, 28000), taxable: true})
		d.fee("Cleaning fee", charm(r, 5000, 15000))
		d.fee("Service fee", percent(d.subTotal(), serviceFee))
		d.taxBP, d.taxLabel = between(r, 1000, 1400), "Occupancy taxes"
	}
}

// hotel builds a hotel reservation priced per night.
func hotel(g *gen, d *draft) {
	r := g.r
	list, ok := hotels[g.a.m.Domain]
	if !ok {
		list = hotels[""]
	}
	name := pick(r, list) + " — " + pick(r, roomTypes)
	nights := between(r, 1, 5)
	checkIn := d.when.AddDate(0, 0, int(between(r, 3, 120)))
	d.addLine(line{sku: g.sku(name), name: name,
		desc: fmt.Sprintf("Check-in %s · %s", checkIn.Format("Jan 2, 2006"), plural(nights, "night")),
		qty:  nights, unit: charm(r, 12900, 42900), taxable: true})
	if chance(r, 0.3) {
		d.fee("Destination fee", nights*between(r, 2500, 4500))
	}
	d.taxBP, d.taxLabel = between(r, 1200, 1700), "Room & occupancy taxes"
}

// flight builds an air ticket: fare per passenger, paid extras, the U.S.
// transportation tax and per-segment government fees.
func flight(al airline) func(g *gen, d *draft) {
	return func(g *gen, d *draft) {
		r := g.r
		from, to := pick(r, airports), pick(r, airports)
		for to == from {
			to = pick(r, airports)
		}
		pax := pickWeighted(r, []choice[int64]{{1, 70}, {2, 22}, {3, 6}, {4, 2}})
		segments := int64(1)
		route := from + " → " + to
		if chance(r, 0.6) {
			segments, route = 2, from+" ⇄ "+to
		}
		// Most travellers fly the main cabin; the fare scales it.
		fare := pickWeighted(r, []choice[int]{{0, 25}, {1, 50}, {2, 15}, {3, 10}})
		fc := al.fares[min(fare, len(al.fares)-1)]
		name := fmt.Sprintf("%s %d · %s · %s", al.code, between(r, 100, 2999), route, fc.name)
		day := d.when.AddDate(0, 0, int(between(r, 5, 120)))
		departs := time.Date(day.Year(), day.Month(), day.Day(), int(between(r, 6, 21)), 5*r.IntN(12), 0, 0, time.UTC)
		main := charm(r, mainFareLo, mainFareHi) // one way, main cabin
		d.addLine(line{sku: g.sku(name), name: name, desc: "Departs " + departs.Format("Mon, Jan 2, 2006 at 3:04 PM"),
			qty: pax, unit: main * fc.pct / 100 * segments, taxable: true})
		if fc.pct <= 100 && chance(r, 0.25) {
			d.addLine(line{sku: g.sku("Preferred seat"), name: "Preferred seat", qty: pax * segments, unit: charm(r, 2500, 8900)})
		}
		if !fc.bags && chance(r, 0.3) {
			d.addLine(line{sku: g.sku("First checked bag"), name: "First checked bag", qty: pax * segments, unit: 3500})
		}
		if chance(r, 0.1) {
			d.addLine(line{sku: g.sku("Trip insurance"), name: "Trip insurance", desc: "Allianz Travel", qty: pax, unit: charm(r, 2900, 6900)})
		}
		d.fee("September 11th Security Fee", 560*pax*segments)
		d.fee("Passenger Facility Charge", 450*pax*segments)
		d.taxBP, d.taxLabel = 750, "U.S. Transportation Tax"
	}
}

// agency builds a booking at a travel agency: hotels mostly, flights at
// agencies that sell them.
func agency(g *gen, d *draft) {
	if al, ok := airlines[g.a.m.Domain]; ok && chance(g.r, 0.4) {
		flight(al)(g, d)
		return
	}
	hotel(g, d)
}

// oneOff builds a one-off purchase at a subscription merchant, beside the
// billings of the account's plans: one of its extras, or an e-gift card.
func oneOff(g *gen, d *draft) {
	r := g.r
	extras := digitalExtras[g.a.m.Domain]
	if len(extras) == 0 {
		face := pick(r, []int64{2500, 5000, 10000})
		extras = []good{{g.a.m.Name + " eGift card", face, face, 1, untaxed, "Delivered by email"}}
	}
	g.pickGoods(d, extras, 1)
	physicalOrder(d)
	if d.fulfil != fulfilShip && !g.a.city.digitalTax {
		d.taxBP = 0
	}
	d.path = "orders"
}

// physicalOrder sends the order by parcel when it holds a physical good.
func physicalOrder(d *draft) {
	for _, l := range d.lines {
		if l.physical {
			d.fulfil = fulfilShip
			return
		}
	}
}

// bill builds billing k of plan p: the plan in effect then, at its price,
// as the line whose external id is the subscription's, and what the
// merchant's bills add around it (a phone bill's fees and taxes, a
// utility's metered usage behind its Budget Billing amount).
func bill(g *gen, d *draft, p *plan, k int64) {
	r := g.r
	cur := p.billedAs(k)
	d.path = "account/billing"
	l := d.addLine(line{sku: p.externalID, name: cur.name + " — " + cycleWords[cur.cycle], desc: cur.desc,
		qty: 1, unit: cur.cents, taxable: true})
	switch {
	case g.a.m.Category == "telecom":
		d.path = "account/bills"
		telecomCharges(g, d)
	case g.a.m.Category == "utilities":
		d.path = "account/bills"
		l.taxable, d.taxBP = false, 0 // taxes are in the level amount
		l.desc = utilityUsage(g, d)
	case g.a.m.Domain == "forhims.com":
		l.taxable = false // prescriptions
	default:
		if !g.a.city.digitalTax {
			d.taxBP = 0
		}
		if chance(r, 0.02) {
			d.discount("Promotional credit", percent(cur.cents, 50))
		}
	}
}

var cycleWords = map[string]string{
	"MONTHLY": "monthly", "ANNUALLY": "annual", "QUARTERLY": "quarterly", "SEMIANNUALLY": "semiannual",
	"WEEKLY": "weekly", "BIWEEKLY": "biweekly",
}

// telecomCharges adds what a phone or internet bill holds beside the plan:
// extras such as a device installment, recovery fees, taxes and the
// AutoPay discount.
func telecomCharges(g *gen, d *draft) {
	r := g.r
	for _, i := range r.Perm(len(telecomExtras))[:between(r, 0, 2)] {
		gd := telecomExtras[i]
		if strings.Contains(gd.name, "%d") {
			gd.name = fmt.Sprintf(gd.name, between(r, 1, 36))
		}
		g.add(d, gd, quantity(r, gd))
	}
	d.fee("Regulatory cost recovery fee", between(r, 150, 450))
	if chance(r, 0.5) {
		d.fee("Administrative & telco recovery charge", between(r, 200, 400))
	}
	d.taxBP, d.taxLabel = between(r, 400, 1200), "Taxes & government fees"
	if chance(r, 0.65) {
		d.discount("AutoPay & paper-free billing discount", pick(r, []int64{500, 1000}))
	}
}

// utilityUsage describes the metered usage behind a utility's level
// Budget Billing amount: more power in summer and winter.
func utilityUsage(g *gen, d *draft) string {
	r := g.r
	meters, ok := utilityMeters[g.a.m.Domain]
	if !ok {
		meters = []utilityMeter{{"Electric service", "kWh", "kWh", 14, 30, 400, 1200, "Customer charge", 1200}}
	}
	var season int64 = 100
	switch d.when.Month() {
	case time.June, time.July, time.August, time.December, time.January:
		season = 135
	}
	from, to := d.when.AddDate(0, -1, -2), d.when.AddDate(0, 0, -2)
	var actual int64
	var parts []string
	for _, m := range meters {
		usage := max(between(r, m.usageLo, m.usageHi)*season/100, 1)
		rate := between(r, m.rateLo, m.rateHi)
		actual += usage*rate + m.fixed
		parts = append(parts, fmt.Sprintf("%s: %d %s at $%s per %s", m.name, usage, m.units, transaction.FormatCents(rate), m.unit))
	}
	return fmt.Sprintf("Budget Billing amount. %s, %s – %s; actual charges $%s", strings.Join(parts, "; "),
		from.Format("Jan 2"), to.Format("Jan 2, 2006"), transaction.FormatCents(actual))
}

// gamesStores sell full game titles besides their own goods.
var gamesStores = map[string]bool{"xbox.com": true, "playstation.com": true, "nintendo.com": true,
	"steampowered.com": true, "epicgames.com": true}

// gaming builds a game store purchase: titles, in-game currency, passes,
// and now and then hardware that ships.
func gaming(g *gen, d *draft) {
	r := g.r
	own := storeGoods[g.a.m.Domain]
	for range pickWeighted(r, []choice[int]{{1, 80}, {2, 17}, {3, 3}}) {
		list := own
		if len(own) == 0 || gamesStores[g.a.m.Domain] && chance(r, 0.5) {
			list = games
		}
		gd := pick(r, list)
		if gd.flags&shipped != 0 && chance(r, 0.85) {
			gd = pick(r, games) // hardware is a rare purchase
		}
		g.add(d, gd, quantity(r, gd))
	}
	physicalOrder(d)
	if d.fulfil != fulfilShip && !g.a.city.digitalTax {
		d.taxBP = 0
	}
	if chance(r, 0.08) {
		d.discount("Sale price", percent(d.subTotal(), pick(r, []float64{20, 25, 33, 50})))
	}
}

// plural writes n with its noun: "1 night", "3 nights".
func plural(n int64, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
