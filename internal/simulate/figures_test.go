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
		if perYear < 1 || perYear > 60 {
			t.Errorf("%s: %.1f orders a year per account", c, perYear)
		}
	}
	t.Log(b.String())
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
