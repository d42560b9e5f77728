package simulate_test

import (
	"fmt"
	"time"

	"github.com/hitchdev/hitch/internal/merchant"
	"github.com/hitchdev/hitch/internal/simulate"
)

func ExampleHistory() {
	catalog, err := merchant.Load()
	if err != nil {
		fmt.Println(err)
		return
	}
	uber, _ := catalog.Get(6)
	seed := simulate.Seed{ClientID: "cli_123", ExternalUserID: "user-42", MerchantID: uber.ID, Call: 1}
	now := time.Date(2026, time.March, 14, 12, 0, 0, 0, time.UTC)

	orders := simulate.History(seed, *uber, now.Add(-simulate.Window), now)
	latest := orders[len(orders)-1]
	fmt.Println(len(orders), "orders in two years; latest:", latest.Products[0].Name, latest.OrderStatus, latest.Price.Currency)

	// A later report of the same order: here the cancellation fee waived
	// (a tip or a refund elsewhere); the external id stays.
	updated := simulate.Update(seed, latest, now.Add(time.Hour))
	fmt.Println(latest.OrderStatus, latest.Price.Total, "→", updated.OrderStatus, updated.Price.Total,
		updated.ExternalID == latest.ExternalID)
	// Output:
	// 71 orders in two years; latest: UberXL trip (canceled) CANCELLED USD
	// CANCELLED 9.89 → CANCELLED 0.00 true
}

func ExampleSubscriptions() {
	catalog, err := merchant.Load()
	if err != nil {
		fmt.Println(err)
		return
	}
	spotify, _ := catalog.Get(5)
	seed := simulate.Seed{ClientID: "cli_123", ExternalUserID: "user-42", MerchantID: spotify.ID, Call: 1}
	now := time.Date(2026, time.March, 14, 12, 0, 0, 0, time.UTC)

	for _, s := range simulate.Subscriptions(seed, *spotify, now) {
		fmt.Println(s.Name, s.BillingCycle, s.Price.Total, s.NextBillingDate.Format(time.DateOnly))
	}
	// Output:
	// Spotify Premium Duo MONTHLY 16.99 2026-03-20
	// Spotify Audiobooks+ MONTHLY 11.99 2026-03-20
}
