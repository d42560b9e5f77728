package card

// TestCards are the development simulator's card numbers that fail a card
// switch, with the CARD_FAILED reason each gives (docs/cards.md). Every
// other valid number succeeds; 4242424242424242 is the usual one.
var TestCards = map[string]string{
	"4000000000000028": "card",
	"4000000000000697": "card expired",
	"4000000000000853": "card in use",
	"4000000000009953": "insufficient funds",
	"4000000000001190": ReasonNotHandled,
	"4000000000001273": "subscription",
	"4000000000001356": "third-party payment method on subscription",
	"4000000000001430": "too close to end of billing cycle",
	"4000000000001505": "other",
}

// testCardOutcome is the failure reason of a test card, "" for success.
func testCardOutcome(number string) string { return TestCards[number] }
