package refconnector

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/chromedp/chromedp"

	"github.com/hitchdev/hitch/connector"
	"github.com/hitchdev/hitch/connector/browser"
)

// walletCard is a card as the wallet page lists it.
type walletCard struct {
	ID      string `json:"id"`
	Brand   string `json:"brand"`
	Last4   string `json:"last4"`
	Expiry  string `json:"expiry"` // MM/YYYY
	Default bool   `json:"default"`
}

// walletState is what the wallet page shows: its cards and the error line
// of the add-card form.
type walletState struct {
	Cards []walletCard `json:"cards"`
	Error string       `json:"error"`
}

const walletStateJS = `(() => ({
  cards: Array.from(document.querySelectorAll('#cards li.card'), (li) => ({
    id: li.getAttribute('data-card-id') || '',
    brand: (li.querySelector('.card-brand') || {}).textContent || '',
    last4: (li.querySelector('.card-last4') || {}).textContent || '',
    expiry: (li.querySelector('.card-expiry') || {}).textContent || '',
    default: li.getAttribute('data-default') === 'true',
  })),
  error: ((document.querySelector('#card-error') || {}).textContent || '').trim(),
}))()`

// invalidFieldsJS lists the ids of the add-card form's fields the browser
// would refuse to submit (empty, or a value its select does not offer).
const invalidFieldsJS = `Array.from(document.querySelectorAll('#add-card-form input, #add-card-form select'))
  .filter((e) => !e.checkValidity() || (e.tagName === 'SELECT' && e.value === ''))
  .map((e) => e.id)`

// cardHolder is the part of a card switch's user the wallet form needs.
type cardHolder struct {
	Name struct {
		FirstName string `json:"first_name"`
		LastName  string `json:"last_name"`
	} `json:"name"`
	Address struct {
		PostalCode string `json:"postal_code"`
	} `json:"address"`
}

// holderDetails is the name on the card and the billing postal code, from
// the card's user when it has them.
func holderDetails(user json.RawMessage) (name, postal string) {
	name, postal = "Card holder", "00000"
	var h cardHolder
	if len(user) == 0 || json.Unmarshal(user, &h) != nil {
		return name, postal
	}
	if n := strings.TrimSpace(strings.TrimSpace(h.Name.FirstName) + " " + strings.TrimSpace(h.Name.LastName)); n != "" {
		name = n
	}
	if p := strings.TrimSpace(h.Address.PostalCode); p != "" {
		postal = p
	}
	return name, postal
}

// expiration splits "MM/YYYY" (or "MM/YY") into the wallet form's values
// "08" and "2029".
func expiration(exp string) (month, year string, err error) {
	m, y, ok := strings.Cut(strings.TrimSpace(exp), "/")
	mn, errM := strconv.Atoi(m)
	yn, errY := strconv.Atoi(y)
	if !ok || errM != nil || errY != nil || mn < 1 || mn > 12 || (len(y) != 2 && len(y) != 4) {
		return "", "", errors.New("refconnector: the card's expiration is not MM/YYYY")
	}
	if len(y) == 2 {
		yn += 2000
	}
	return fmt.Sprintf("%02d", mn), strconv.Itoa(yn), nil
}

// cardRefusals maps the add-card form's error lines to the public service's
// failure reasons.
var cardRefusals = []struct{ contains, reason string }{
	{"insufficient funds", "insufficient funds"},
	{"expired", "card expired"},
	{"declined", "card"},
	{"card number is incorrect", "card"},
	{"valid card number", "card"},
}

// SwitchCard adds the card in the wallet and makes it the default, then
// checks that the wallet shows a default card with the number's last four.
// A card the shop refuses gives a *connector.Failure ("card", "insufficient
// funds", "card expired"); a card already in the wallet is made the default.
func (s *Site) SwitchCard(ctx context.Context, sess *browser.Session, c *connector.Card) error {
	if c == nil {
		return errors.New("refconnector: a card switch without a card")
	}
	number := strings.NewReplacer(" ", "", "-", "").Replace(c.Number)
	sess.AddSecret(c.Number)
	sess.AddSecret(number)
	cvv := ""
	if c.CVV != nil {
		cvv = *c.CVV
		sess.AddSecret(cvv)
	}
	if len(number) < 4 {
		return &connector.Failure{Reason: "card"}
	}
	month, year, err := expiration(c.Expiration)
	if err != nil {
		return err
	}
	name, postal := holderDetails(c.User)
	if err := s.open(ctx, sess, "open wallet", s.url("/wallet")); err != nil {
		return err
	}
	fill := []chromedp.Action[chromedp.Void]{
		chromedp.SendKeys(chromedp.ID("cardholder_name"), name),
		chromedp.SendKeys(chromedp.ID("card_number"), number),
		chromedp.SetValue(chromedp.ID("exp_month"), month),
		chromedp.SetValue(chromedp.ID("exp_year"), year),
	}
	if cvv != "" {
		fill = append(fill, chromedp.SendKeys(chromedp.ID("cvv"), cvv))
	}
	fill = append(fill, chromedp.SendKeys(chromedp.ID("postal_code"), postal))
	var invalid []string
	fill = append(fill, evaluate(invalidFieldsJS, &invalid))
	if err := sess.Run(ctx, "fill card form", fill...); err != nil {
		return err
	}
	// The browser would not submit the form (a missing CVV, an expiry year
	// the form does not offer): say which fields, never their values.
	if len(invalid) > 0 {
		return fmt.Errorf("refconnector: the wallet form refuses the fields %s", strings.Join(invalid, ", "))
	}
	var st walletState
	if err := sess.Run(ctx, "add card",
		chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
			checked, err := chromedp.Evaluate[bool](`document.querySelector('#make_default').checked`)(ctx, t)
			if err != nil || checked {
				return err
			}
			_, err = chromedp.Click(chromedp.ID("make_default"))(ctx, t)
			return err
		}),
		submit("#add-card-submit"),
		evaluate(walletStateJS, &st),
	); err != nil {
		return err
	}
	last4 := number[len(number)-4:]
	if st.Error != "" {
		lower := strings.ToLower(st.Error)
		for _, r := range cardRefusals {
			if strings.Contains(lower, r.contains) {
				return &connector.Failure{Reason: r.reason}
			}
		}
		if !strings.Contains(lower, "already in your wallet") {
			return fmt.Errorf("refconnector: the wallet refused the card: %q", st.Error)
		}
		if err := s.makeDefault(ctx, sess, st, last4, month+"/"+year); err != nil {
			return err
		}
		if err := sess.Run(ctx, "read wallet", evaluate(walletStateJS, &st)); err != nil {
			return err
		}
	}
	for _, wc := range st.Cards {
		if wc.Default && strings.TrimSpace(wc.Last4) == last4 {
			return nil
		}
	}
	return errors.New("refconnector: the wallet does not show the new card as the default")
}

// makeDefault makes the wallet's card with the last four and expiry the
// default.
func (s *Site) makeDefault(ctx context.Context, sess *browser.Session, st walletState, last4, expiry string) error {
	for _, wc := range st.Cards {
		if strings.TrimSpace(wc.Last4) != last4 || strings.TrimSpace(wc.Expiry) != expiry {
			continue
		}
		if wc.Default {
			return nil
		}
		sel := fmt.Sprintf(`li.card[data-card-id=%q] .make-default-button`, wc.ID)
		return sess.Run(ctx, "make card default", submit(sel))
	}
	return errors.New("refconnector: the wallet says the card is in it but does not list it")
}

// CardOnFile reads the wallet's default card: its brand in lower case
// ("visa", "mastercard", "amex", "discover"), last four and expiration
// MM/YYYY. Without a default card it returns a *connector.Failure with the
// reason "did not receive payment method information".
func (s *Site) CardOnFile(ctx context.Context, sess *browser.Session) (*connector.CardSummary, error) {
	if err := s.open(ctx, sess, "open wallet", s.url("/wallet")); err != nil {
		return nil, err
	}
	var st walletState
	if err := sess.Run(ctx, "read wallet", evaluate(walletStateJS, &st)); err != nil {
		return nil, err
	}
	for _, wc := range st.Cards {
		if wc.Default {
			return &connector.CardSummary{
				Brand:      strings.ToLower(brandCode(wc.Brand)),
				LastFour:   strings.TrimSpace(wc.Last4),
				Expiration: strings.TrimSpace(wc.Expiry),
			}, nil
		}
	}
	return nil, &connector.Failure{Reason: "did not receive payment method information"}
}
