package simulate

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/hitchdev/hitch/internal/merchant"
	"github.com/hitchdev/hitch/internal/transaction"
)

// person is the user behind a seed, the same at every merchant.
type person struct {
	first, last string
	home        transaction.Address
	city        city
	cards       []card
}

// card is one of the person's payment cards.
type card struct {
	brand, lastFour, nickname string
}

// account is the person's account at one merchant: what stays the same on
// every order and every call.
type account struct {
	person
	m        merchant.Merchant
	base     string // "https://www.amazon.com", no trailing slash
	methods  []payer
	giftCard payer
	// loyalty is nil when the account has no membership; program names the
	// membership in discount labels.
	loyalty *transaction.LoyaltyMembership
	program string
	plans   []plan // the account's subscription plans; nil when none
}

// payer is a saved payment method of the account.
type payer struct {
	externalID, typ, brand, lastFour, name string
}

func newPerson(s Seed) person {
	r := personRand(s)
	p := person{first: pick(r, firstNames), last: pick(r, lastNames), city: pick(r, cities)}
	p.home = randomAddress(r, p.city)
	for range 1 + r.IntN(3) {
		brand := pickWeighted(r, cardBrands)
		c := card{brand: brand, lastFour: randString(r, digits, 4)}
		switch n := r.IntN(10); {
		case n < 5:
			c.nickname = p.first + " " + p.last
		case n < 8:
			c.nickname = pick(r, cardNicknames[brand])
		}
		p.cards = append(p.cards, c)
	}
	return p
}

// randomAddress returns a street address in c.
func randomAddress(r *rand.Rand, c city) transaction.Address {
	a := transaction.Address{
		Line1:      fmt.Sprintf("%d %s", between(r, 100, 9899), pick(r, streetNames)),
		City:       c.name,
		Region:     c.region,
		PostalCode: c.zip3 + randString(r, digits, 2),
		Country:    "US",
	}
	if chance(r, 0.3) {
		a.Line2 = fmt.Sprintf(pick(r, unitFormats), between(r, 1, 42))
	}
	return a
}

func newAccount(s Seed, m merchant.Merchant) *account {
	a := &account{person: newPerson(s), m: m, base: baseURL(m.Domain)}
	r := accountRand(s, purposeAccount)
	for _, c := range a.cards {
		a.methods = append(a.methods, payer{externalID: "pm_" + randString(r, base62, 24),
			typ: "CARD", brand: c.brand, lastFour: c.lastFour, name: c.nickname})
	}
	// Wallets sit in front of the primary card, as apps save them.
	if w := walletType(m.Category); w != "" && chance(r, 0.35) {
		p := payer{externalID: "pm_" + randString(r, base62, 24), typ: w}
		switch w {
		case "APPLE_PAY", "GOOGLE_PAY":
			p.brand, p.lastFour = a.cards[0].brand, randString(r, digits, 4)
			p.name = map[string]string{"APPLE_PAY": "Apple Pay", "GOOGLE_PAY": "Google Pay"}[w]
		case "PAYPAL":
			p.brand, p.name = "PAYPAL", "PayPal"
		}
		a.methods = append([]payer{p}, a.methods...)
	}
	a.giftCard = payer{externalID: "gc_" + randString(r, base62, 20), typ: "GIFT_CARD",
		brand: m.Name + " Gift Card", lastFour: randString(r, digits, 4), name: "Gift card balance"}
	if prog, ok := loyaltyPrograms[m.Domain]; ok && chance(r, 0.55) {
		a.loyalty = &transaction.LoyaltyMembership{Tier: pickWeighted(r, prog.tiers)}
		a.program = prog.name
	}
	if hasPlans(m) {
		a.plans = accountPlans(s, m)
	}
	return a
}

// walletType is the digital wallet an account in category may pay with.
func walletType(category string) string {
	switch category {
	case "rides", "food_delivery", "streaming", "fitness":
		return "APPLE_PAY"
	case "gaming", "software", "news":
		return "PAYPAL"
	case "shopping", "home":
		return "PAYPAL"
	case "groceries", "pharmacy":
		return "GOOGLE_PAY"
	}
	return ""
}

// baseURL is the merchant's web origin: https://www.<domain>, except for a
// domain that already names a host ("tv.youtube.com").
func baseURL(domain string) string {
	if strings.Count(domain, ".") >= 2 {
		return "https://" + domain
	}
	return "https://www." + domain
}

// loyaltyProgram is a merchant's membership program and its tiers.
type loyaltyProgram struct {
	name  string
	tiers []choice[string]
}

func tiers(names ...string) []choice[string] {
	cs := make([]choice[string], len(names))
	for i, n := range names {
		cs[i] = choice[string]{n, len(names) - i} // lower tiers are more common
	}
	return cs
}

// loyaltyPrograms by merchant domain.
var loyaltyPrograms = map[string]loyaltyProgram{
	"amazon.com":           {"Prime", tiers("Prime")},
	"walmart.com":          {"Walmart+", tiers("Walmart+")},
	"target.com":           {"Target Circle", tiers("Target Circle", "Target Circle Card", "Target Circle 360")},
	"uber.com":             {"Uber One", tiers("Uber One")},
	"ubereats.com":         {"Uber One", tiers("Uber One")},
	"lyft.com":             {"Lyft Pink", tiers("Lyft Pink")},
	"doordash.com":         {"DashPass", tiers("DashPass", "DashPass Annual")},
	"grubhub.com":          {"Grubhub+", tiers("Grubhub+")},
	"instacart.com":        {"Instacart+", tiers("Instacart+")},
	"costco.com":           {"Costco", tiers("Gold Star", "Executive")},
	"samsclub.com":         {"Sam's Club", tiers("Club", "Plus")},
	"kroger.com":           {"Kroger Plus", tiers("Kroger Plus", "Boost")},
	"wholefoodsmarket.com": {"Prime", tiers("Prime")},
	"safeway.com":          {"Safeway for U", tiers("for U")},
	"publix.com":           {"Club Publix", tiers("Club Publix")},
	"heb.com":              {"H-E-B Rewards", tiers("Member")},
	"cvs.com":              {"ExtraCare", tiers("ExtraCare", "ExtraCare Plus")},
	"walgreens.com":        {"myWalgreens", tiers("myWalgreens", "myWalgreens Plus")},
	"bestbuy.com":          {"My Best Buy", tiers("My Best Buy", "My Best Buy Plus", "My Best Buy Total")},
	"macys.com":            {"Star Rewards", tiers("Bronze", "Silver", "Gold", "Platinum")},
	"nordstrom.com":        {"The Nordy Club", tiers("Member", "Insider", "Ambassador", "Icon")},
	"nike.com":             {"Nike Membership", tiers("Member")},
	"starbucks.com":        {"Starbucks Rewards", tiers("Green", "Gold")},
	"chipotle.com":         {"Chipotle Rewards", tiers("Member", "Extra")},
	"mcdonalds.com":        {"MyMcDonald's Rewards", tiers("Member")},
	"dominos.com":          {"Domino's Rewards", tiers("Member")},
	"homedepot.com":        {"Pro Xtra", tiers("Member", "Elite", "Diamond")},
	"lowes.com":            {"MyLowe's Rewards", tiers("Member", "Pro Rewards")},
	"chewy.com":            {"Chewy+", tiers("Chewy+")},
	"marriott.com":         {"Marriott Bonvoy", tiers("Member", "Silver Elite", "Gold Elite", "Platinum Elite", "Titanium Elite")},
	"hilton.com":           {"Hilton Honors", tiers("Member", "Silver", "Gold", "Diamond")},
	"delta.com":            {"SkyMiles", tiers("SkyMiles Member", "Silver Medallion", "Gold Medallion", "Platinum Medallion", "Diamond Medallion")},
	"united.com":           {"MileagePlus", tiers("MileagePlus Member", "Premier Silver", "Premier Gold", "Premier Platinum", "Premier 1K")},
	"aa.com":               {"AAdvantage", tiers("AAdvantage Member", "Gold", "Platinum", "Platinum Pro", "Executive Platinum")},
	"southwest.com":        {"Rapid Rewards", tiers("Member", "A-List", "A-List Preferred")},
	"expedia.com":          {"One Key", tiers("Blue", "Silver", "Gold", "Platinum")},
	"booking.com":          {"Genius", tiers("Genius Level 1", "Genius Level 2", "Genius Level 3")},
	"ikea.com":             {"IKEA Family", tiers("IKEA Family")},
	"wayfair.com":          {"Wayfair Rewards", tiers("Wayfair Rewards")},
	"playstation.com":      {"PlayStation Plus", tiers("Essential", "Extra", "Premium")},
	"xbox.com":             {"Microsoft Rewards", tiers("Level 1", "Level 2")},
	"nintendo.com":         {"My Nintendo", tiers("My Nintendo", "Gold Points member")},
	"epicgames.com":        {"Epic Rewards", tiers("Member")},
}

// pay picks how the account pays an order of total cents: one saved method,
// sometimes a gift card or points first and a card for the rest, or a
// buy-now-pay-later plan for a large basket.
func (a *account) pay(r *rand.Rand, total int64, giftOdds float64) []transaction.PaymentMethod {
	if total <= 0 {
		return []transaction.PaymentMethod{}
	}
	main := a.methods[0]
	if len(a.methods) > 1 && chance(r, 0.25) {
		main = a.methods[1+r.IntN(len(a.methods)-1)]
	}
	if total >= 30000 && bnplCategory(a.m.Category) && chance(r, 0.06) {
		main = payer{externalID: "pm_" + randString(r, base62, 24), typ: pick(r, []string{"AFFIRM", "KLARNA"})}
		main.brand, main.name = strings.ToUpper(main.typ[:1])+strings.ToLower(main.typ[1:]), "Pay over time"
		return []transaction.PaymentMethod{main.method(total)}
	}
	if total >= 500 && chance(r, giftOdds) {
		first := a.giftCard
		if a.program != "" && a.m.Category == "travel" && chance(r, 0.5) {
			first = payer{externalID: "lp_" + randString(r, base62, 16), typ: "LOYALTY_POINTS",
				brand: a.program, name: a.program + " points"}
		}
		part := giftAmount(r, total)
		return []transaction.PaymentMethod{first.method(part), main.method(total - part)}
	}
	return []transaction.PaymentMethod{main.method(total)}
}

// giftAmount is the part of total (at least 5.00) a gift card covers: a
// card's usual face value when it is smaller, else a remaining balance,
// leaving at least 1.00 for the card.
func giftAmount(r *rand.Rand, total int64) int64 {
	faces := []int64{1000, 1500, 2500, 5000, 10000}
	if f := faces[r.IntN(len(faces))]; f < total && chance(r, 0.6) {
		return f
	}
	return between(r, 100, total-100)
}

func bnplCategory(category string) bool {
	switch category {
	case "shopping", "home", "travel", "fitness":
		return true
	}
	return false
}

func (p payer) method(cents int64) transaction.PaymentMethod {
	return transaction.PaymentMethod{ExternalID: p.externalID, Type: p.typ, Brand: p.brand,
		LastFour: p.lastFour, Name: p.name, TransactionAmount: transaction.FormatCents(cents)}
}
