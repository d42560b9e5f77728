package simulate

import (
	"math/rand/v2"
	"time"

	"github.com/hitchdev/hitch/internal/merchant"
)

// plan is a subscription plan a merchant offers. An account holds one main
// plan and maybe add-ons; lo..hi is the price range in cents (hi 0: lo is
// the price). The account's own fields are drawn by accountPlans.
type plan struct {
	name, desc string
	lo, hi     int64
	cycle      string
	family     bool
	addon      bool

	// The account's subscription to the plan.
	cents      int64
	externalID string
	start      time.Time
	// tiers are the plans the account is billed as in turn when its plan
	// changes: tiers[0] from the start, tiers[i] from change i on; nil when
	// the plan never changes.
	tiers []tier
	// changes are the billings at which the plan changes, in order. When
	// every > 0 the changes go on every that many cycles after the last
	// listed one, cycling through tiers.
	changes []int64
	every   int64
	// notice is how many cycles ahead a change shows as ACTIVE_PLAN_CHANGE.
	notice int64
	// endAt is the billing that no longer comes for a plan that was
	// canceled: it is billed for the cycles before, shows
	// ACTIVE_CANCELLATION in its last cycle and is gone after; 0 when it
	// never ends.
	endAt int64
}

// tier is what a billing of a plan shows: the plan in effect then.
type tier struct {
	name, desc string
	cents      int64
	cycle      string
	family     bool
}

func (p *plan) own() tier {
	return tier{name: p.name, desc: p.desc, cents: p.cents, cycle: p.cycle, family: p.family}
}

// billingAt is the plan's k-th billing, counted from 0 at its start: the
// same day of the month (start days are 1–28) and time every cycle.
func (p *plan) billingAt(k int64) time.Time {
	months, days := cycleStep(p.cycle)
	return p.start.AddDate(0, int(k)*months, int(k)*days)
}

// change returns the billing of the plan's change i (from 0), or -1 when
// there is none.
func (p *plan) change(i int) int64 {
	n := len(p.changes)
	switch {
	case i < n:
		return p.changes[i]
	case p.every > 0 && n > 0:
		return p.changes[n-1] + int64(i-n+1)*p.every
	}
	return -1
}

// tier returns the plan billed after i changes.
func (p *plan) tier(i int) tier {
	switch {
	case len(p.tiers) == 0:
		return p.own()
	case p.every > 0:
		return p.tiers[i%len(p.tiers)]
	}
	return p.tiers[min(i, len(p.tiers)-1)]
}

// changesBy returns the number of the plan's changes at or before billing k.
func (p *plan) changesBy(k int64) int {
	n := 0
	for at := p.change(0); at >= 0 && at <= k; at = p.change(n) {
		n++
	}
	return n
}

// billedAs is the plan in effect at billing k.
func (p *plan) billedAs(k int64) tier {
	return p.tier(p.changesBy(k))
}

const (
	monthly   = "MONTHLY"
	annually  = "ANNUALLY"
	quarterly = "QUARTERLY"
)

func planOf(name string, cents int64, cycle, desc string) plan {
	return plan{name: name, desc: desc, lo: cents, cycle: cycle}
}

func familyPlan(name string, cents int64, cycle, desc string) plan {
	return plan{name: name, desc: desc, lo: cents, cycle: cycle, family: true}
}

func addonPlan(name string, cents int64, cycle, desc string) plan {
	return plan{name: name, desc: desc, lo: cents, cycle: cycle, addon: true}
}

func rangedPlan(name string, lo, hi int64, cycle, desc string) plan {
	return plan{name: name, desc: desc, lo: lo, hi: hi, cycle: cycle}
}

// plansByDomain lists the plans of well-known subscription merchants.
var plansByDomain = map[string][]plan{
	"netflix.com": {
		planOf("Netflix Standard with ads", 799, monthly, "2 screens at a time, Full HD, with ads"),
		planOf("Netflix Standard", 1799, monthly, "2 screens at a time, Full HD, no ads"),
		planOf("Netflix Premium", 2499, monthly, "4 screens at a time, Ultra HD and spatial audio"),
		addonPlan("Netflix Extra Member", 899, monthly, "One extra member outside your household"),
	},
	"spotify.com": {
		planOf("Spotify Premium Individual", 1199, monthly, "Ad-free music, offline listening"),
		planOf("Spotify Premium Duo", 1699, monthly, "2 Premium accounts for a couple under one roof"),
		familyPlan("Spotify Premium Family", 1999, monthly, "Up to 6 Premium accounts for family members"),
		planOf("Spotify Premium Student", 599, monthly, "Discounted Premium for students"),
		addonPlan("Spotify Audiobooks+", 1199, monthly, "15 extra hours of audiobook listening a month"),
	},
	"disneyplus.com": {
		planOf("Disney+ Basic", 999, monthly, "With ads"),
		planOf("Disney+ Premium", 1599, monthly, "No ads, 4K UHD, downloads"),
		planOf("Disney+ Premium (Annual)", 15999, annually, "No ads, billed yearly"),
		familyPlan("Disney Bundle Trio Premium", 2699, monthly, "Disney+, Hulu and ESPN+, no ads"),
	},
	"hulu.com": {
		planOf("Hulu (With Ads)", 999, monthly, ""),
		planOf("Hulu (No Ads)", 1899, monthly, ""),
		planOf("Hulu + Live TV", 8299, monthly, "95+ live channels with Disney+ and ESPN+ included"),
		addonPlan("Max add-on", 999, monthly, "Max With Ads on Hulu"),
	},
	"max.com": {
		planOf("Max Basic With Ads", 999, monthly, "2 devices at a time"),
		planOf("Max Standard", 1699, monthly, "2 devices at a time, Full HD, no ads"),
		planOf("Max Ultimate Ad-Free", 2099, monthly, "4 devices at a time, 4K UHD, Dolby Atmos"),
	},
	"youtube.com": {
		planOf("YouTube Premium", 1399, monthly, "Ad-free videos, background play, YouTube Music"),
		familyPlan("YouTube Premium Family", 2299, monthly, "Up to 5 family members in your household"),
		planOf("YouTube Premium Student", 799, monthly, ""),
		addonPlan("NFL Sunday Ticket", 44900, annually, "Every out-of-market Sunday game"),
	},
	"tv.youtube.com": {
		familyPlan("YouTube TV Base Plan", 8299, monthly, "100+ channels, unlimited DVR, 6 accounts per household"),
		addonPlan("4K Plus", 999, monthly, "4K content and unlimited streams at home"),
		addonPlan("Max add-on", 1699, monthly, ""),
	},
	"paramountplus.com": {
		planOf("Paramount+ Essential", 799, monthly, "With limited ads"),
		planOf("Paramount+ with SHOWTIME", 1299, monthly, "Ad-free"),
		planOf("Paramount+ with SHOWTIME (Annual)", 11999, annually, "Ad-free, billed yearly"),
	},
	"peacocktv.com": {
		planOf("Peacock Premium", 799, monthly, "With ads"),
		planOf("Peacock Premium Plus", 1399, monthly, "No ads, downloads, local NBC channel"),
	},
	"siriusxm.com": {
		planOf("SiriusXM Music & Entertainment", 999, monthly, "In the car and in the app"),
		planOf("SiriusXM All Access", 2399, monthly, "Every channel, Howard Stern and all sports"),
		addonPlan("Second radio", 1299, monthly, "Music & Entertainment on an extra vehicle"),
	},
	"audible.com": {
		planOf("Audible Premium Plus", 1495, monthly, "1 credit a month and the Plus Catalog"),
		planOf("Audible Premium Plus Annual", 14950, annually, "12 credits a year"),
		planOf("Audible Plus", 795, monthly, "Unlimited listening to the Plus Catalog"),
	},
	"sling.com": {
		planOf("Sling Orange", 4599, monthly, "1 stream, ESPN and Disney"),
		planOf("Sling Blue", 5099, monthly, "3 streams, news and entertainment"),
		planOf("Sling Orange & Blue", 6099, monthly, ""),
		addonPlan("Sports Extra", 1100, monthly, ""),
		addonPlan("DVR Plus", 500, monthly, "Unlimited DVR"),
	},
	"verizon.com": {
		planOf("Unlimited Welcome", 6500, monthly, "1 line, 5G, autopay price"),
		planOf("Unlimited Plus", 8000, monthly, "1 line, 30 GB premium hotspot"),
		familyPlan("Unlimited Ultimate, 3 lines", 18000, monthly, "3 lines, global data"),
		addonPlan("Fios Home Internet 500 Mbps", 4999, monthly, ""),
	},
	"t-mobile.com": {
		planOf("Go5G", 7500, monthly, "1 line"),
		familyPlan("Go5G Plus, 4 lines", 20000, monthly, "4 lines, Netflix on us"),
		planOf("Essentials", 6000, monthly, "1 line"),
		addonPlan("T-Mobile Home Internet", 5000, monthly, ""),
	},
	"att.com": {
		planOf("AT&T Unlimited Starter SL", 6500, monthly, "1 line"),
		planOf("AT&T Unlimited Extra EL", 7500, monthly, "1 line, 30 GB hotspot"),
		familyPlan("AT&T Unlimited Premium PL, 4 lines", 20000, monthly, "4 lines"),
		addonPlan("AT&T Fiber 500", 6500, monthly, ""),
	},
	"xfinity.com": {
		planOf("Xfinity Internet 400 Mbps", 5500, monthly, ""),
		planOf("Xfinity Internet Gigabit", 8000, monthly, ""),
		addonPlan("xFi Complete", 2500, monthly, "Gateway rental and unlimited data"),
		addonPlan("Xfinity Mobile Unlimited", 4000, monthly, "1 line"),
	},
	"spectrum.com": {
		planOf("Spectrum Internet Premier", 7000, monthly, "500 Mbps"),
		planOf("Spectrum Internet Gig", 9000, monthly, ""),
		addonPlan("Spectrum Mobile Unlimited", 3000, monthly, "1 line"),
	},
	"fi.google.com": {
		planOf("Google Fi Simply Unlimited", 5000, monthly, "1 line"),
		planOf("Google Fi Unlimited Plus", 6500, monthly, "1 line, 100 GB cloud storage"),
		planOf("Google Fi Flexible", 2000, monthly, "Pay $10 per GB"),
	},
	"mintmobile.com": {
		planOf("Unlimited — 12 months", 30000, annually, "Prepaid for a year"),
		planOf("Unlimited — 3 months", 4500, quarterly, "Prepaid for 3 months"),
		planOf("15GB — 12 months", 18000, annually, ""),
	},
	"cricketwireless.com": {
		planOf("Cricket Unlimited", 5500, monthly, "1 line"),
		planOf("Cricket 5GB", 3000, monthly, ""),
	},
	"adobe.com": {
		planOf("Creative Cloud All Apps", 5999, monthly, "20+ apps, 100 GB cloud storage"),
		planOf("Photoshop", 2299, monthly, ""),
		planOf("Acrobat Pro", 1999, monthly, "Annual plan, billed monthly"),
		planOf("Photography (1TB)", 1999, monthly, "Lightroom and Photoshop"),
	},
	"microsoft.com": {
		planOf("Microsoft 365 Personal", 9999, annually, "1 person, 1 TB OneDrive"),
		familyPlan("Microsoft 365 Family", 12999, annually, "Up to 6 people, 1 TB each"),
		planOf("Microsoft 365 Personal (Monthly)", 999, monthly, ""),
	},
	"dropbox.com": {
		planOf("Dropbox Plus", 1199, monthly, "2 TB"),
		planOf("Dropbox Plus (Annual)", 11988, annually, "2 TB, billed yearly"),
		planOf("Dropbox Essentials", 1999, monthly, "3 TB"),
	},
	"one.google.com": {
		planOf("Google One Basic (100 GB)", 199, monthly, ""),
		familyPlan("Google One Premium (2 TB)", 999, monthly, "Share with up to 5 others"),
		planOf("Google One AI Premium", 1999, monthly, "2 TB and Gemini Advanced"),
	},
	"chatgpt.com": {
		planOf("ChatGPT Plus", 2000, monthly, ""),
		planOf("ChatGPT Pro", 20000, monthly, ""),
	},
	"canva.com": {
		planOf("Canva Pro", 1499, monthly, ""),
		planOf("Canva Pro (Annual)", 11999, annually, ""),
		familyPlan("Canva Teams", 10000, annually, "Per person, minimum 3 people"),
	},
	"zoom.us": {
		planOf("Zoom Workplace Pro", 1599, monthly, "Meetings up to 30 hours"),
		planOf("Zoom Workplace Pro (Annual)", 14990, annually, ""),
		addonPlan("Large Meetings 500", 6250, monthly, ""),
	},
	"notion.so": {
		planOf("Notion Plus", 1200, monthly, ""),
		planOf("Notion Plus (Annual)", 12000, annually, ""),
		addonPlan("Notion AI", 1000, monthly, ""),
	},
	"grammarly.com": {
		planOf("Grammarly Pro", 3000, monthly, ""),
		planOf("Grammarly Pro (Annual)", 14400, annually, ""),
	},
	"duolingo.com": {
		planOf("Super Duolingo", 1299, monthly, "No ads, unlimited hearts"),
		planOf("Super Duolingo (Annual)", 8499, annually, ""),
		familyPlan("Super Duolingo Family", 11999, annually, "Up to 6 members"),
		planOf("Duolingo Max", 2999, monthly, "Super plus AI features"),
	},
	"nytimes.com": {
		planOf("New York Times All Access", 2500, monthly, "News, Games, Cooking, Wirecutter and The Athletic"),
		planOf("New York Times Digital News", 1700, monthly, ""),
		addonPlan("NYT Games", 600, monthly, ""),
		addonPlan("NYT Cooking", 500, monthly, ""),
	},
	"wsj.com": {
		planOf("WSJ Digital", 3899, monthly, ""),
		planOf("WSJ Print + Digital", 4799, monthly, ""),
		planOf("WSJ Digital (Annual)", 29900, annually, ""),
	},
	"washingtonpost.com": {
		planOf("Washington Post Basic Digital", 1200, monthly, ""),
		planOf("Washington Post Premium Digital", 1500, monthly, ""),
		planOf("Washington Post All-Access Digital (Annual)", 12000, annually, ""),
	},
	"economist.com": {
		planOf("The Economist Digital", 2500, monthly, ""),
		planOf("The Economist Digital (Annual)", 24000, annually, ""),
		planOf("The Economist Print + Digital", 32000, annually, ""),
	},
	"theatlantic.com": {
		planOf("The Atlantic Digital", 7999, annually, ""),
		planOf("The Atlantic Premium", 9999, annually, "Digital, print and ad-free app"),
	},
	"substack.com": {
		planOf("Paid subscription — The Free Press", 800, monthly, ""),
		planOf("Paid subscription — Letters from an American", 500, monthly, ""),
		planOf("Paid subscription — Platformer", 1000, monthly, ""),
		planOf("Paid subscription — The Bulwark (Annual)", 10000, annually, ""),
		addonPlan("Paid subscription — Garbage Day", 500, monthly, ""),
		addonPlan("Free subscription — Lenny's Newsletter", 0, monthly, "Free posts only"),
		addonPlan("Free subscription — Slow Boring", 0, monthly, "Free posts only"),
	},
	"onepeloton.com": {
		planOf("Peloton All-Access Membership", 4400, monthly, "For Bike, Tread and Row owners"),
		planOf("Peloton App+", 2400, monthly, ""),
		planOf("Peloton App One", 1299, monthly, ""),
	},
	"planetfitness.com": {
		planOf("PF Black Card", 2499, monthly, "Any location, guest privileges"),
		planOf("Classic Membership", 1500, monthly, "Home club"),
		addonPlan("Annual membership fee", 4900, annually, ""),
	},
	"equinox.com": {
		rangedPlan("Equinox All Access", 29000, 40000, monthly, "Every club in the region"),
		rangedPlan("Equinox Single Club", 24000, 30000, monthly, ""),
	},
	"classpass.com": {
		planOf("ClassPass 45 credits", 5900, monthly, ""),
		planOf("ClassPass 25 credits", 3300, monthly, ""),
		planOf("ClassPass 100 credits", 12900, monthly, ""),
	},
	"strava.com": {
		planOf("Strava Subscription", 1199, monthly, ""),
		planOf("Strava Subscription (Annual)", 7999, annually, ""),
		familyPlan("Strava Family Plan", 13999, annually, "Up to 4 members"),
		addonPlan("Strava Free", 0, monthly, "Basic account"),
	},
	"anytimefitness.com": {
		rangedPlan("Anytime Fitness Membership", 4199, 5999, monthly, "24/7 access to your home gym"),
	},
	"orangetheory.com": {
		planOf("Premier Membership", 16900, monthly, "Unlimited classes"),
		planOf("Elite Membership", 10900, monthly, "8 classes a month"),
		planOf("Basic Membership", 6900, monthly, "4 classes a month"),
	},
	"pge.com":         {rangedPlan("Residential Electric & Gas Service", 9000, 32000, monthly, "Budget Billing")},
	"coned.com":       {rangedPlan("Residential Electric Service", 7000, 26000, monthly, "Budget Billing")},
	"duke-energy.com": {rangedPlan("Residential Electric Service", 9000, 24000, monthly, "Equal Payment Plan")},
	"sce.com":         {rangedPlan("Residential Electric Service", 8000, 30000, monthly, "Level Pay Plan")},
	"wm.com": {
		rangedPlan("Residential Trash & Recycling", 2800, 4500, monthly, "Weekly curbside pickup"),
		rangedPlan("Residential Trash & Recycling (Quarterly)", 8400, 13500, quarterly, "Weekly curbside pickup"),
	},
	"amwater.com": {rangedPlan("Residential Water Service", 4000, 11000, monthly, "")},
	"ring.com": {
		planOf("Ring Home Basic", 499, monthly, "Video history for one device"),
		planOf("Ring Home Standard", 1000, monthly, "Video history for all devices at one home"),
		planOf("Ring Home Premium", 2000, monthly, "24/7 recording and professional monitoring"),
		planOf("Ring Home Standard (Annual)", 10000, annually, ""),
	},
	"adt.com": {
		planOf("ADT Secure Monitoring", 4599, monthly, "24/7 professional monitoring"),
		planOf("ADT Smart Home Monitoring", 5799, monthly, "Monitoring and app control"),
		addonPlan("ADT+ Video", 1000, monthly, "Cloud video storage"),
	},
	"forhims.com": {
		planOf("Hair Loss Kit", 3900, monthly, "Finasteride and minoxidil, shipped monthly"),
		planOf("Hair Loss Kit (3 months)", 9900, quarterly, "Shipped every 3 months"),
		planOf("Custom Skincare", 2999, monthly, "Prescription anti-aging cream"),
	},
}

// hasPlans reports whether the merchant sells subscriptions.
func hasPlans(m merchant.Merchant) bool {
	switch m.Category {
	case "streaming", "software", "news", "fitness", "telecom", "utilities":
		return true
	}
	return m.Subscription
}

// merchantPlans returns what m offers: its own plans, or plans named after
// it in the style of its category.
func merchantPlans(m merchant.Merchant) []plan {
	if ps, ok := plansByDomain[m.Domain]; ok {
		return ps
	}
	n := m.Name
	switch m.Category {
	case "streaming":
		return []plan{planOf(n+" Standard", 1099, monthly, ""), planOf(n+" Premium", 1599, monthly, "No ads"),
			familyPlan(n+" Family", 1999, monthly, "Up to 6 profiles")}
	case "software":
		return []plan{planOf(n+" Pro", 1299, monthly, ""), planOf(n+" Pro (Annual)", 11999, annually, ""),
			addonPlan(n+" extra storage", 299, monthly, "")}
	case "news":
		return []plan{planOf(n+" Digital Subscription", 1500, monthly, ""), planOf(n+" Digital (Annual)", 12000, annually, "")}
	case "fitness":
		return []plan{rangedPlan(n+" Membership", 2500, 7500, monthly, "")}
	case "telecom":
		return []plan{planOf(n+" Unlimited", 6000, monthly, "1 line"), familyPlan(n+" Unlimited, 4 lines", 16000, monthly, "")}
	case "utilities":
		return []plan{rangedPlan("Residential Service", 5000, 25000, monthly, "Budget Billing")}
	}
	return []plan{planOf(n+" Membership", 999, monthly, ""), planOf(n+" Membership (Annual)", 9999, annually, "")}
}

// accountPlans draws the account's plans: one main plan and, now and then,
// add-ons, at most three in all; UserEmpty and UserTenThousand have none.
// The draw does not depend on the call nor on now.
func accountPlans(s Seed, m merchant.Merchant) []plan {
	if s.ExternalUserID == UserEmpty || s.ExternalUserID == UserTenThousand {
		return nil
	}
	r := accountRand(s, purposeSubscriptions)
	offered := merchantPlans(m)
	var mains, addons []plan
	for _, p := range offered {
		if p.addon {
			addons = append(addons, p)
		} else {
			mains = append(mains, p)
		}
	}
	if len(mains) == 0 {
		mains, addons = addons, nil
	}
	out := []plan{pick(r, mains)}
	for _, i := range r.Perm(len(addons)) {
		if len(out) < 3 && chance(r, 0.35) {
			out = append(out, addons[i])
		}
	}
	// Ids, dates and statuses come from a stream of their own, drawn the
	// same number of times for every account, so adding a plan to a
	// merchant's offer does not move them.
	rd := accountRand(s, purposeSubscriptions+"/dates")
	for i := range out {
		p := &out[i]
		p.cents = planCents(r, *p)
		p.externalID = "sub_" + randString(rd, base62, 24)
		days, hour, minute, second := rd.IntN(startDays), rd.IntN(24), rd.IntN(60), rd.IntN(60)
		d := epoch.AddDate(0, 0, days)
		p.start = time.Date(d.Year(), d.Month(), min(d.Day(), 28), hour, minute, second, 0, time.UTC)
		if i > 0 {
			p.start = out[0].start.AddDate(0, 1+rd.IntN(18), 0) // add-ons come after the main plan
		}
		status := pickWeighted(rd, []choice[string]{{"ACTIVE", 85}, {"ACTIVE_CANCELLATION", 10}, {"ACTIVE_PLAN_CHANGE", 5}})
		changed, changeAt, other := chance(rd, 0.15), 1+rd.Int64N(12), rd.IntN(len(mains))
		ends, endAt := chance(rd, 0.3), 2+rd.Int64N(36)
		// Where, within eight years of the start, the main plan's
		// cancellation or next change falls, in millionths.
		later := rd.Int64N(1_000_000)
		if i > 0 {
			// Add-ons come and go: some were canceled; a plan change is
			// the main plan's.
			if ends && cancellable(m) {
				p.endAt = endAt
			}
			continue
		}
		var others []tier // the main plans of the same cycle it can change to
		for _, q := range append(mains[other:len(mains):len(mains)], mains[:other]...) {
			if q.cycle == p.cycle && q.name != p.name {
				q.cents = planCents(r, q)
				others = append(others, q.own())
			}
		}
		span := max(cyclesIn(p.cycle, 8)*later/1_000_000, 1)
		if s.ExternalUserID == UserPlanChange && len(others) > 0 {
			// Every third billing the plan changes, in turn through the
			// merchant's plans of its cycle, and the next change is
			// scheduled as soon as one takes effect: whenever the account
			// is observed, a change is behind it and one ahead.
			p.tiers = append([]tier{others[0], p.own()}, others[1:]...)
			p.changes, p.every, p.notice = []int64{1}, 3, 3
			continue
		}
		// A main plan never ends: a user who links a subscription merchant
		// has its plan, so that no developer's test meets a random user
		// without one. Cancellations are the add-ons'. (status is drawn
		// all the same, so that the draws after it do not change.)
		if changed && len(others) > 0 {
			p.tiers, p.changes = []tier{others[0], p.own()}, []int64{changeAt}
		}
		if status == "ACTIVE_PLAN_CHANGE" && len(others) > 0 {
			// A change announced a cycle ahead: back to the earlier plan
			// or on to another.
			if len(p.tiers) == 0 {
				p.tiers = []tier{p.own()}
			}
			at := span
			if len(p.changes) > 0 {
				at += p.changes[0]
			}
			p.tiers = append(p.tiers, others[len(others)-1])
			p.changes, p.notice = append(p.changes, at), 1
		}
	}
	return out
}

// cyclesIn is the number of billing cycles in years.
func cyclesIn(cycle string, years int64) int64 {
	months, days := cycleStep(cycle)
	if months > 0 {
		return years * 12 / int64(months)
	}
	return years * 365 / int64(days)
}

// planCents is the account's price of p: its list price, or a price in its
// range for plans priced by usage.
func planCents(r *rand.Rand, p plan) int64 {
	if p.hi > p.lo {
		return between(r, p.lo/100, p.hi/100)*100 + between(r, 0, 99)
	}
	return p.lo
}

// Main plans start on a fixed day between epoch and epoch + startDays (days
// 1–28 of a month, so that monthly billing keeps its day): before the two
// years of generated orders, and the same whenever the plan is observed.
var epoch = time.Date(2019, time.January, 1, 0, 0, 0, 0, time.UTC)

const startDays = 1885

// cancellable reports whether the merchant lets its plans be canceled
// online.
func cancellable(m merchant.Merchant) bool {
	return m.Category != "utilities" && m.Domain != "adt.com"
}
