package card_test

import (
	"fmt"
	"time"

	"github.com/hitchdev/hitch/internal/card"
)

func ExamplePayload_Validate() {
	body := []byte(`{
		"user": {
			"name": {"first_name": "Ada", "last_name": "Lovelace"},
			"address": {"street": "12 Analytical Way", "city": "New York",
				"region": "NY", "postal_code": "10001", "country": "US"},
			"phone_number": "+12125550123"
		},
		"card": {"number": "4242424242424242", "expiration": "12/28", "cvv": "123"}
	}`)
	p, err := card.DecodePayload(body)
	if err != nil {
		fmt.Println(err)
		return
	}
	now := time.Date(2026, time.May, 15, 0, 0, 0, 0, time.UTC)
	if ferr := p.Validate(now); ferr != nil {
		fmt.Println(ferr.Field, ferr.Message)
		return
	}
	month, year := p.Card.Expiry()
	fmt.Println(card.Brand(p.Card.Number), p.Card.LastFour(), month, year)

	// A failing field is named; its value never appears in the message.
	p.Card.Number = "4242424242424241"
	ferr := p.Validate(now)
	fmt.Println(ferr.Field)
	fmt.Println(ferr.Message)

	p.Wipe()
	// Output:
	// visa 4242 12 2028
	// card.number
	// The card.number field must pass the Luhn check.
}
