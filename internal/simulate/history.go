package simulate

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"time"
)

// Window is how far back the first observation of an account reaches: the
// orders of the last two years. Later observations reach further back.
const Window = 730 * 24 * time.Hour

// Test users: external_user_ids that give a developer a known shape at
// every merchant. docs/simulator.md describes each.
const (
	UserEmpty       = "user_empty"        // no orders, no subscriptions
	UserTenThousand = "user_10000_orders" // exactly 10,000 orders in the last two years, no subscriptions
	UserEveryStatus = "user_every_status" // every status the merchant's orders can take, in the last days
	UserPlanChange  = "user_plan_change"  // a main plan changed in the past, and another change pending
)

// tenThousand is the number of orders of UserTenThousand in any two years:
// day d holds ordersOnDay(d) of them, a pattern that repeats every 73 days
// and sums to 1,000 per period, so any 730 consecutive days hold 10,000.
const tenThousand = 10000

func ordersOnDay(d int64) int64 {
	return (d+1)*1000/73 - d*1000/73
}

// cadenceKind is how the orders of an account fall in time.
type cadenceKind int

const (
	// randomDays: any day may have an order, perYear on average for the
	// median account, more in the months of a seasonal peak.
	randomDays cadenceKind = iota
	// habit: a regular trip every few days (groceries, coffee, refills),
	// give or take a day, now and then a skipped one.
	habit
	// billed: the billing dates of the account's plans, same day every
	// cycle; one-off purchases at perYear.
	billed
)

// cadence is how often the median account orders at a merchant.
type cadence struct {
	kind    cadenceKind
	perYear int64      // randomDays: orders a year; billed: one-off purchases a year
	every   [2]int64   // habit: the days between trips, drawn per account in this range
	season  *[12]int64 // per-mille weight of each month; nil is flat
}

func every(lo, hi int64) cadence { return cadence{kind: habit, every: [2]int64{lo, hi}} }

func perYear(n int64, season *[12]int64) cadence {
	return cadence{kind: randomDays, perYear: n, season: season}
}

// Seasons, per mille of an average month: retail peaks in November and
// December (and July's sales), travel in summer, scooters in warm months.
var (
	retailSeason  = &[12]int64{850, 850, 950, 950, 950, 950, 1050, 950, 950, 1000, 1350, 1600}
	travelSeason  = &[12]int64{800, 850, 1050, 950, 1050, 1250, 1300, 1150, 900, 950, 1000, 1100}
	outdoorSeason = &[12]int64{500, 500, 800, 1000, 1200, 1400, 1500, 1400, 1200, 1000, 700, 500}
	gamingSeason  = &[12]int64{900, 850, 900, 900, 900, 950, 950, 950, 950, 1000, 1400, 1650}
)

// usage is how much an account uses a merchant, in percent of the median
// account: some barely, some a lot.
func usage(r *rand.Rand) int64 {
	return pickWeighted(r, []choice[int64]{{25, 15}, {50, 20}, {100, 30}, {180, 20}, {320, 15}})
}

// entry is one order of an account's history before it is built.
type entry struct {
	when time.Time
	// n numbers the account's orders from 1 in time order; for a billing it
	// is the cycle, counted from 0 at the plan's start.
	n    int64
	plan int // index of the billed plan in account.plans; -1 for an order
	// forced is a status a test user's order must take, with variant
	// choosing how (a CANCELLED order refunded or never charged).
	forced  string
	fulfil  fulfilment
	variant int
}

func (e entry) billing() bool { return e.plan >= 0 }

// opened is when the account was opened at a merchant without plans: a
// fixed day between epoch and epoch + startDays, whatever now is.
func opened(s Seed) time.Time {
	r := accountRand(s, purposeHistory)
	return epoch.AddDate(0, 0, r.IntN(startDays))
}

// timeline returns the entries of the account's history up to now, oldest
// first. Entries before now do not depend on now: a later now only adds
// entries.
func timeline(s Seed, a *account, p profile, now time.Time) []entry {
	switch s.ExternalUserID {
	case UserEmpty:
		return nil
	case UserTenThousand:
		return busyTimeline(s, now)
	}
	r := accountRand(s, purposeHistory)
	r.IntN(startDays) // the draw of opened
	use := usage(r)
	offset := time.Duration(a.city.utcOffset) * time.Hour
	var out []entry
	switch p.cadence.kind {
	case habit:
		out = habitTimes(r, opened(s), now, p, use, offset)
	case randomDays:
		out = randomTimes(r, opened(s), now, p, p.cadence.perYear*use, offset)
	case billed:
		for i, pl := range a.plans {
			if pl.cents <= 0 {
				continue
			}
			for k := int64(0); pl.endAt == 0 || k < pl.endAt; k++ {
				at := pl.billingAt(k)
				if at.After(now) {
					break
				}
				out = append(out, entry{when: at, n: k, plan: i})
			}
		}
		if len(digitalExtras[a.m.Domain]) > 0 && len(a.plans) > 0 {
			out = append(out, randomTimes(r, a.plans[0].start, now, p, p.cadence.perYear*use, offset)...)
		}
		slices.SortStableFunc(out, func(x, y entry) int { return x.when.Compare(y.when) })
	}
	if s.ExternalUserID == UserEveryStatus {
		out = append(out, everyStatus(p, now)...)
		slices.SortStableFunc(out, func(x, y entry) int { return x.when.Compare(y.when) })
	}
	// Orders are numbered in time order; a test user's forced orders, which
	// move with now, apart, so they never shift the others' numbers.
	n, forced := int64(0), int64(900000)
	for i := range out {
		switch {
		case out[i].forced != "":
			forced++
			out[i].n = forced
		case !out[i].billing():
			n++
			out[i].n = n
		}
	}
	return out
}

// randomTimes draws orders day by day from start: each day has an order
// with a probability of perYearPct/100 a year, weighted by the season, at
// a local hour of the profile. All in integers, so every platform draws
// the same days.
func randomTimes(r *rand.Rand, start, now time.Time, p profile, perYearPct int64, offset time.Duration) []entry {
	season := p.cadence.season
	var sum int64 = 12000
	if season != nil {
		sum = 0
		for _, w := range season {
			sum += w
		}
	}
	var out []entry
	day := time.Date(start.Year(), start.Month(), start.Day(), 0, 0, 0, 0, time.UTC)
	for ; !day.Add(-offset).After(now); day = day.AddDate(0, 0, 1) {
		var w int64 = 1000
		if season != nil {
			w = season[day.Month()-1]
		}
		// perYearPct/100 orders a year, w/(sum/12) of an average month's share.
		micro := perYearPct * w * 12 * 1_000_000 / (100 * sum * 365)
		if r.Int64N(1_000_000) >= micro {
			continue
		}
		if at := placeAt(r, day, p.hours, offset); !at.After(now) {
			out = append(out, entry{when: at, plan: -1})
		}
	}
	return out
}

// habitTimes places a trip every few days from start, at about the same
// hour; the median account's interval is drawn in the cadence's range and
// heavier users come more often.
func habitTimes(r *rand.Rand, start, now time.Time, p profile, use int64, offset time.Duration) []entry {
	lo, hi := p.cadence.every[0], p.cadence.every[1]
	interval := max(between(r, lo, hi)*100/min(max(use, 50), 200), 1)
	span := max(p.hours[1]-p.hours[0], 1)
	hour := p.hours[0] + r.IntN(span)
	var out []entry
	day := time.Date(start.Year(), start.Month(), start.Day(), 0, 0, 0, 0, time.UTC).AddDate(0, 0, r.IntN(int(interval)))
	for {
		h := min(max(hour+r.IntN(3)-1, p.hours[0]), p.hours[1]-1)
		at := day.Add(time.Duration(h)*time.Hour + time.Duration(r.IntN(3600))*time.Second - offset)
		if at.After(now) {
			return out
		}
		out = append(out, entry{when: at, plan: -1})
		step := interval
		if interval > 2 {
			step += between(r, -1, 1)
		}
		if chance(r, 0.06) {
			step += interval // away, or shopped elsewhere
		}
		day = day.AddDate(0, 0, int(step))
	}
}

// placeAt returns a time on local day (midnight, as UTC) at a local hour
// when people place the profile's orders.
func placeAt(r *rand.Rand, day time.Time, hours [2]int, offset time.Duration) time.Time {
	span := max(hours[1]-hours[0], 1)
	tod := time.Duration(hours[0]+r.IntN(span))*time.Hour + time.Duration(r.IntN(3600))*time.Second
	return day.Add(tod - offset)
}

// busyTimeline is UserTenThousand's history: ordersOnDay orders on each of
// the 730 days before now's day, 10,000 in all, the first day's after
// now's time of day, so that the last two years hold exactly 10,000. An
// order is numbered by its day and place in it, so it keeps its id when
// observed again.
func busyTimeline(s Seed, now time.Time) []entry {
	today := now.Truncate(24 * time.Hour)
	first := today.AddDate(0, 0, -730)
	var out []entry
	for day := first; day.Before(today); day = day.AddDate(0, 0, 1) {
		d := int64(day.Sub(epoch) / (24 * time.Hour))
		r := newRand(purposeHistory, s.ClientID, s.ExternalUserID, strconv.FormatInt(s.MerchantID, 10), strconv.FormatInt(d, 10))
		var lo int64
		if day.Equal(first) {
			lo = min(int64(now.Add(-Window).Sub(first)/time.Second)+1, 86399)
		}
		var times []time.Time
		for range ordersOnDay(d) {
			times = append(times, day.Add(time.Duration(lo+r.Int64N(86400-lo))*time.Second))
		}
		slices.SortFunc(times, time.Time.Compare)
		for i, at := range times {
			out = append(out, entry{when: at, plan: -1, n: d*100 + int64(i)})
		}
	}
	return out
}

// statusesOf lists the final statuses an order of fulfilment f can take,
// in-flight ones first.
func statusesOf(f fulfilment, travel bool) []string {
	switch f {
	case fulfilShip:
		return []string{"ORDERED", "SHIPPED", "DELIVERED", "RETURNED", "REFUNDED", "CANCELLED", "FAILED"}
	case fulfilDeliver:
		return []string{"ORDERED", "DELIVERED", "REFUNDED", "CANCELLED"}
	case fulfilPickup:
		return []string{"ORDERED", "PICKED_UP", "REFUNDED", "CANCELLED"}
	case fulfilService:
		if travel {
			return []string{"BILLED", "COMPLETED", "REFUNDED", "CANCELLED"}
		}
		return []string{"COMPLETED", "REFUNDED", "CANCELLED"}
	}
	return []string{"BILLED", "COMPLETED", "REFUNDED", "FAILED"}
}

// everyStatus is UserEveryStatus's last orders: one of each status each
// fulfilment of the profile can give, and both kinds of cancellation
// (never charged, and refunded), placed over the last five days.
func everyStatus(p profile, now time.Time) []entry {
	var out []entry
	fs := []fulfilment{p.fulfil}
	if p.altOdds > 0 {
		fs = append(fs, p.alt)
	}
	if p.cadence.kind == billed {
		fs = []fulfilment{fulfilDigital}
	}
	for _, f := range fs {
		for _, st := range statusesOf(f, p.travel) {
			if st == "CANCELLED" || st == "REFUNDED" {
				out = append(out, entry{plan: -1, forced: st, fulfil: f, variant: 1},
					entry{plan: -1, forced: st, fulfil: f, variant: 2})
				continue
			}
			out = append(out, entry{plan: -1, forced: st, fulfil: f})
		}
	}
	// In-flight statuses belong to the newest orders.
	step := 5 * 24 * time.Hour / time.Duration(len(out)+1)
	start := now.Truncate(time.Second).Add(-5 * 24 * time.Hour)
	slices.SortStableFunc(out, func(x, y entry) int { return inFlightRank(x.forced) - inFlightRank(y.forced) })
	for i := range out {
		out[i].when = start.Add(time.Duration(i+1) * step).Truncate(time.Second)
	}
	return out
}

func inFlightRank(status string) int {
	switch status {
	case "ORDERED":
		return 3
	case "SHIPPED":
		return 2
	case "BILLED":
		return 1
	}
	return 0
}
