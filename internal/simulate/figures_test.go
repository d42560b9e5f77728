package simulate

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hitchdev/hitch/internal/transaction"
)

// TestCategoryFigures measures, per merchant category, the orders a year
// and the median order total of 60 accounts at each of its merchants over
// the last two years, as docs/simulator.md tables them beside the public
// figures they follow; run with -v to print the table. It fails when a
// category leaves its plausible range.
func TestCategoryFigures(t *testing.T) {
	t.Parallel()
	type acc struct {
		accounts int
		orders   int
		totals   []int64
	}
	byCat := map[string]*acc{}
	for _, m := range catalog(t) {
		a := byCat[m.Category]
		if a == nil {
			a = &acc{}
			byCat[m.Category] = a
		}
		for i := range 60 {
			s := Seed{ClientID: "cli_figures", ExternalUserID: fmt.Sprint("user-", i), MerchantID: m.ID}
			orders := recent(s, m, testNow)
			a.accounts++
			a.orders += len(orders)
			for _, o := range orders {
				a.totals = append(a.totals, cents(o.Price.SubTotal)+adjustmentsBefore(o))
			}
		}
	}
	cats := make([]string, 0, len(byCat))
	for c := range byCat {
		cats = append(cats, c)
	}
	slices.Sort(cats)
	var b strings.Builder
	fmt.Fprintf(&b, "\n| category | orders a year per account | median order total |\n|---|---:|---:|\n")
	for _, c := range cats {
		a := byCat[c]
		slices.Sort(a.totals)
		perYear := float64(a.orders) / float64(a.accounts) / (float64(Window) / float64(365*24*time.Hour))
		median := int64(0)
		if len(a.totals) > 0 {
			median = a.totals[len(a.totals)/2]
		}
		fmt.Fprintf(&b, "| %s | %.1f | $%s |\n", c, perYear, transaction.FormatCents(median))
		r, ok := plausible[c]
		if !ok {
			t.Errorf("no plausible range for category %s", c)
			continue
		}
		if perYear < r.perYear[0] || perYear > r.perYear[1] || median < r.median[0] || median > r.median[1] {
			t.Errorf("%s: %.1f orders a year per account, median $%s; want %v a year and %v cents", c, perYear,
				transaction.FormatCents(median), r.perYear, r.median)
		}
	}
	fmt.Fprintf(&b, "\n| merchant | orders a year per account | median order total |\n|---|---:|---:|\n")
	for _, id := range []int64{1, 42, 10, 9, 6, 61, 17, 97, 19, 4} {
		m := merchantByID(t, id)
		var n int
		var totals []int64
		for i := range 60 {
			s := Seed{ClientID: "cli_figures", ExternalUserID: fmt.Sprint("user-", i), MerchantID: m.ID}
			orders := recent(s, m, testNow)
			n += len(orders)
			for _, o := range orders {
				totals = append(totals, cents(o.Price.SubTotal)+adjustmentsBefore(o))
			}
		}
		slices.Sort(totals)
		fmt.Fprintf(&b, "| %s | %.1f | $%s |\n", m.Name, float64(n)/60/2, transaction.FormatCents(totals[len(totals)/2]))
	}
	t.Log(b.String())
}

// plausible are the ranges a category's figures must stay in, around the
// public figures of docs/simulator.md.
var plausible = map[string]struct {
	perYear [2]float64
	median  [2]int64
}{
	"groceries":     {[2]float64{25, 80}, [2]int64{5000, 20000}},
	"shopping":      {[2]float64{5, 40}, [2]int64{3000, 25000}},
	"food_delivery": {[2]float64{15, 70}, [2]int64{1500, 6000}},
	"rides":         {[2]float64{15, 70}, [2]int64{1500, 6000}},
	"travel":        {[2]float64{1, 8}, [2]int64{20000, 150000}},
	"utilities":     {[2]float64{10, 13}, [2]int64{8000, 25000}},
	"telecom":       {[2]float64{11, 30}, [2]int64{4000, 20000}},
	"streaming":     {[2]float64{11, 30}, [2]int64{500, 5000}},
	"software":      {[2]float64{8, 30}, [2]int64{500, 10000}},
	"news":          {[2]float64{8, 30}, [2]int64{500, 10000}},
	"fitness":       {[2]float64{11, 30}, [2]int64{1000, 30000}},
	"pharmacy":      {[2]float64{6, 20}, [2]int64{1000, 10000}},
	"gaming":        {[2]float64{3, 15}, [2]int64{500, 10000}},
	"home":          {[2]float64{3, 20}, [2]int64{2000, 30000}},
}

// TestCadence checks how orders fall in time: a grocery habit every week or
// two, a few flights a year, and counts that differ between users and
// between merchants.
func TestCadence(t *testing.T) {
	t.Parallel()
	gaps := func(orders []transaction.Transaction) []time.Duration {
		var out []time.Duration
		for i := 1; i < len(orders); i++ {
			out = append(out, orders[i].Datetime.Sub(orders[i-1].Datetime))
		}
		slices.Sort(out)
		return out
	}
	grocer, airline, amazon := merchantByID(t, 42), merchantByID(t, 61), merchantByID(t, 1)
	counts := map[int]bool{}
	var bookings []int
	for i := range 40 {
		s := Seed{ClientID: "cli_cadence", ExternalUserID: fmt.Sprint("user-", i)}
		s.MerchantID = grocer.ID
		if g := gaps(recent(s, grocer, testNow)); len(g) > 0 {
			if median := g[len(g)/2]; median < 3*24*time.Hour || median > 30*24*time.Hour {
				t.Errorf("%s at %s: median gap %v between trips", s.ExternalUserID, grocer.Name, median)
			}
		}
		s.MerchantID = airline.ID
		bookings = append(bookings, len(recent(s, airline, testNow)))
		s.MerchantID = amazon.ID
		counts[len(recent(s, amazon, testNow))] = true
	}
	slices.Sort(bookings)
	if median, most := bookings[len(bookings)/2], bookings[len(bookings)-1]; median > 8 || most > 30 {
		t.Errorf("%s: median %d bookings in two years, at most %d", airline.Name, median, most)
	}
	if len(counts) < 20 {
		t.Errorf("40 users have only %d different order counts at %s", len(counts), amazon.Name)
	}
}

// adjustmentsBefore is what an order came to before any refund: its
// adjustments other than REFUND.
func adjustmentsBefore(t transaction.Transaction) int64 {
	var s int64
	for _, a := range t.Price.Adjustments {
		if a.Type != "REFUND" {
			s += cents(a.Amount)
		}
	}
	return s
}

// TestFareClasses checks the airlines' fare classes: dearer as they go up,
// and the premium cabin dearer than any main-cabin fare.
func TestFareClasses(t *testing.T) {
	t.Parallel()
	for domain, al := range airlines {
		for i := 1; i < len(al.fares); i++ {
			if al.fares[i].pct <= al.fares[i-1].pct {
				t.Errorf("%s: %s costs no more than %s", domain, al.fares[i].name, al.fares[i-1].name)
			}
		}
		if top := al.fares[len(al.fares)-1]; top.pct >= 200 && top.pct*mainFareLo <= 100*mainFareHi {
			t.Errorf("%s: %s can cost less than a main-cabin fare", domain, top.name)
		}
	}
}
