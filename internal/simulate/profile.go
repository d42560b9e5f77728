package simulate

import (
	"strings"

	"github.com/hitchdev/hitch/internal/merchant"
)

// profile is how one merchant's orders are made: the basket builder, how
// they are fulfilled, when in the day people place them.
type profile struct {
	build    func(g *gen, d *draft)
	fulfil   fulfilment
	alt      fulfilment // the other fulfilment, taken with altOdds
	altOdds  float64
	hours    [2]int // local hours [from, to) when orders are placed; to may pass 24
	path     string // the order URL's path segment
	giftOdds float64
	travel   bool // bookings: billed when made, completed after the trip
	gifts    bool // shipped orders may go to someone else as a present
	cadence  cadence
}

var (
	shopHours    = [2]int{7, 24}
	mealHours    = [2]int{11, 22}
	storeHours   = [2]int{8, 21}
	rideHours    = [2]int{6, 26}
	billingHours = [2]int{3, 10} // renewals and autopay run early
	allDay       = [2]int{0, 24}
)

func shop(s shelf, pickupOdds float64) profile {
	return profile{build: parcel(s), fulfil: fulfilShip, alt: fulfilPickup, altOdds: pickupOdds,
		hours: shopHours, path: "orders", giftOdds: 0.07, gifts: true}
}

// profileFor returns the profile of m: by its domain for well-known
// merchants, else by its category.
func profileFor(m merchant.Merchant) profile {
	p := orderProfile(m)
	p.cadence = cadenceFor(m)
	return p
}

// cadenceFor is how often the median account orders at m. The figures, and
// the public figures behind them, are tabled in docs/simulator.md.
func cadenceFor(m merchant.Merchant) cadence {
	if hasPlans(m) {
		return cadence{kind: billed, perYear: 2}
	}
	switch m.Domain {
	case "amazon.com":
		return perYear(20, retailSeason)
	case "walmart.com":
		return perYear(18, retailSeason)
	case "target.com":
		return perYear(12, retailSeason)
	case "ebay.com", "homedepot.com", "lowes.com":
		return perYear(7, retailSeason)
	case "etsy.com", "temu.com", "shein.com", "macys.com", "nordstrom.com":
		return perYear(5, retailSeason)
	case "apple.com", "ikea.com", "crateandbarrel.com":
		return perYear(2, retailSeason)
	case "bestbuy.com", "nike.com", "wayfair.com":
		return perYear(3, retailSeason)
	case "chewy.com":
		return every(28, 42) // autoship
	case "angi.com":
		return perYear(3, travelSeason)
	case "li.me":
		return perYear(20, outdoorSeason)
	case "goodrx.com":
		return every(28, 35)
	case "express-scripts.com":
		return every(88, 92)
	case "costco.com", "samsclub.com":
		return every(12, 21)
	case "instacart.com":
		return every(7, 14)
	case "starbucks.com":
		return every(3, 7)
	case "dominos.com", "chipotle.com", "mcdonalds.com":
		return perYear(14, nil)
	case "airbnb.com", "vrbo.com":
		return perYear(2, travelSeason)
	}
	switch m.Category {
	case "groceries":
		return every(7, 14)
	case "food_delivery":
		return perYear(30, nil)
	case "rides":
		return perYear(36, nil)
	case "travel":
		return perYear(3, travelSeason)
	case "gaming":
		return perYear(6, gamingSeason)
	case "pharmacy":
		return every(25, 40)
	}
	return perYear(6, retailSeason)
}

// orderProfile returns how m's orders are made.
func orderProfile(m merchant.Merchant) profile {
	const never = 1 << 40 // free-shipping threshold of a store that always charges
	switch m.Domain {
	case "amazon.com":
		return shop(shelf{goods: generalGoods, minItems: 1, maxItems: 2, sellers: marketplaceSellers, sellerOdds: 0.45,
			freeShipAt: 3500, shipFee: 599}, 0)
	case "walmart.com":
		return shop(shelf{goods: generalGoods, minItems: 1, maxItems: 5, sellers: marketplaceSellers, sellerOdds: 0.25,
			freeShipAt: 3500, shipFee: 699}, 0.3)
	case "target.com":
		return shop(shelf{goods: generalGoods, minItems: 1, maxItems: 5, sellers: marketplaceSellers, sellerOdds: 0.05,
			freeShipAt: 3500, shipFee: 599}, 0.35)
	case "ebay.com":
		return shop(shelf{goods: generalGoods, minItems: 1, maxItems: 2, sellers: marketplaceSellers, sellerOdds: 1,
			freeShipAt: 2500, shipFee: 495}, 0)
	case "etsy.com":
		return shop(shelf{goods: handmadeGoods, minItems: 1, maxItems: 3, sellers: etsyShops, sellerOdds: 1,
			freeShipAt: 3500, shipFee: 499}, 0)
	case "temu.com":
		return shop(shelf{goods: fastFashionGoods, minItems: 2, maxItems: 8, sellers: marketplaceSellers, sellerOdds: 0.9}, 0)
	case "shein.com":
		return shop(shelf{goods: fastFashionGoods, minItems: 2, maxItems: 8, freeShipAt: 4900, shipFee: 799}, 0)
	case "apple.com":
		return shop(shelf{goods: appleGoods, minItems: 1, maxItems: 2}, 0.15)
	case "bestbuy.com":
		return shop(shelf{goods: electronicsGoods, minItems: 1, maxItems: 3, freeShipAt: 3500, shipFee: 599}, 0.3)
	case "chewy.com":
		return shop(shelf{goods: petGoods, minItems: 1, maxItems: 4, freeShipAt: 4900, shipFee: 499, autoship: true}, 0)
	case "nike.com":
		return shop(shelf{goods: nikeGoods(), minItems: 1, maxItems: 3, freeShipAt: 5000, shipFee: 500, variants: true}, 0)
	case "macys.com", "nordstrom.com":
		return shop(shelf{goods: apparelGoods, minItems: 1, maxItems: 4, freeShipAt: 4900, shipFee: 1095, variants: true}, 0.1)
	case "homedepot.com", "lowes.com":
		return shop(shelf{goods: homeImprovementGoods, minItems: 1, maxItems: 6, freeShipAt: 4500, shipFee: 799}, 0.45)
	case "ikea.com":
		return shop(shelf{goods: furnitureGoods, minItems: 1, maxItems: 3, freeShipAt: never, shipFee: 4900}, 0.25)
	case "wayfair.com", "crateandbarrel.com":
		return shop(shelf{goods: furnitureGoods, minItems: 1, maxItems: 2, freeShipAt: 3500, shipFee: 499}, 0)
	case "angi.com":
		return profile{build: homeService, fulfil: fulfilService, hours: shopHours, path: "bookings", giftOdds: 0.02}
	case "uber.com", "lyft.com":
		return profile{build: ride, fulfil: fulfilService, hours: rideHours, path: ridePath, giftOdds: 0.03}
	case "li.me":
		return profile{build: scooter, fulfil: fulfilService, hours: rideHours, path: ridePath}
	case "goodrx.com":
		return profile{build: discountCard, fulfil: fulfilPickup, hours: storeHours, path: "orders"}
	case "express-scripts.com":
		return profile{build: mailPharmacy, fulfil: fulfilShip, hours: allDay, path: "orders"}
	case "forhims.com":
		return profile{build: oneOff, fulfil: fulfilShip, hours: allDay, path: "orders", giftOdds: 0.01}
	case "costco.com", "samsclub.com":
		return profile{build: grocery(houseBrands[m.Domain], true), fulfil: fulfilPickup, alt: fulfilDeliver,
			altOdds: 0.25, hours: storeHours, path: "orders", giftOdds: 0.03}
	case "instacart.com":
		return profile{build: grocery(houseBrands[m.Domain], false), fulfil: fulfilDeliver, alt: fulfilPickup,
			altOdds: 0.15, hours: storeHours, path: "orders", giftOdds: 0.03}
	case "airbnb.com":
		return travel(stay(14.2))
	case "vrbo.com":
		return travel(stay(8))
	case "expedia.com", "booking.com":
		return travel(agency)
	case "marriott.com", "hilton.com":
		return travel(hotel)
	case "delta.com", "united.com", "aa.com", "southwest.com":
		return travel(flight(airlines[m.Domain]))
	case "dominos.com", "chipotle.com", "mcdonalds.com":
		return profile{build: chain(chainMenus[m.Domain]), fulfil: fulfilPickup, alt: fulfilDeliver, altOdds: 0.4,
			hours: mealHours, path: "orders", giftOdds: 0.04}
	case "starbucks.com":
		return profile{build: chain(chainMenus[m.Domain]), fulfil: fulfilPickup, alt: fulfilDeliver, altOdds: 0.05,
			hours: [2]int{6, 18}, path: "orders", giftOdds: 0.25}
	}
	switch m.Category {
	case "groceries":
		return profile{build: grocery(houseBrands[m.Domain], false), fulfil: fulfilPickup, alt: fulfilDeliver,
			altOdds: 0.45, hours: storeHours, path: "orders", giftOdds: 0.03}
	case "food_delivery":
		return profile{build: foodApp, fulfil: fulfilDeliver, alt: fulfilPickup, altOdds: 0.2,
			hours: mealHours, path: "orders", giftOdds: 0.04}
	case "rides":
		return profile{build: ride, fulfil: fulfilService, hours: rideHours, path: ridePath, giftOdds: 0.03}
	case "travel":
		return travel(hotel)
	case "telecom":
		return profile{build: oneOff, fulfil: fulfilDigital, hours: billingHours, path: "account/bills", giftOdds: 0.01}
	case "utilities":
		return profile{build: oneOff, fulfil: fulfilDigital, hours: billingHours, path: "account/bills"}
	case "streaming", "software", "news", "fitness":
		return profile{build: oneOff, fulfil: fulfilDigital, hours: billingHours, path: "account/billing", giftOdds: 0.03}
	case "gaming":
		return profile{build: gaming, fulfil: fulfilDigital, hours: [2]int{10, 26}, path: "orders", giftOdds: 0.2}
	case "pharmacy":
		return profile{build: pharmacy, fulfil: fulfilPickup, alt: fulfilShip, altOdds: 0.3,
			hours: storeHours, path: "orders", giftOdds: 0.02}
	case "home":
		if hasPlans(m) {
			return profile{build: oneOff, fulfil: fulfilDigital, hours: billingHours, path: "account/billing", giftOdds: 0.02}
		}
		return shop(shelf{goods: homeImprovementGoods, minItems: 1, maxItems: 5, freeShipAt: 4500, shipFee: 799}, 0.3)
	}
	return shop(shelf{goods: generalGoods, minItems: 1, maxItems: 4, freeShipAt: 3500, shipFee: 599}, 0)
}

func travel(build func(g *gen, d *draft)) profile {
	return profile{build: build, fulfil: fulfilService, hours: shopHours, path: "reservations", giftOdds: 0.1, travel: true}
}

// nikeGoods is what Nike sells itself: its own brand.
func nikeGoods() []good {
	var out []good
	for _, g := range apparelGoods {
		if strings.HasPrefix(g.name, "Nike") {
			out = append(out, g)
		}
	}
	return out
}
