package refconnector

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hitchdev/hitch/connector"
	"github.com/hitchdev/hitch/connector/browser"
	"github.com/hitchdev/hitch/examples/refshop"
)

func ptr[T any](v T) *T { return &v }

// cardExpiry is an expiry two years ahead, MM/YYYY.
func cardExpiry() string { return fmt.Sprintf("09/%d", time.Now().Year()+2) }

// cardHolderJSON is a card switch's user as Hitch sends it.
var cardHolderJSON = json.RawMessage(`{"name": {"first_name": "Ada", "last_name": "Lovelace"}, "address": {"postal_code": "94110"}}`)

// TestSwitchCardRefusals: the shop's test declines map to their reasons,
// and a card without a CVV is an error (the form cannot be sent) that does
// not show the number.
func TestSwitchCardRefusals(t *testing.T) {
	t.Parallel()
	pool := sharedPool(t)
	s := newShop(t)
	site := New(s.URL)
	state := mustLogin(t, pool, site, ada)
	tests := []struct {
		number     string
		cvv        *string
		wantReason string // "" for an error that is not a refusal
	}{
		{"4000000000000002", ptr("123"), "card"},
		{"4000000000009995", ptr("123"), "insufficient funds"},
		{"4000000000000069", ptr("123"), "card expired"},
		{"6011111111111117", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.number, func(t *testing.T) {
			t.Parallel()
			inSession(t, pool, state, func(ctx context.Context, sess *browser.Session) {
				err := site.SwitchCard(ctx, sess, &connector.Card{User: cardHolderJSON, Number: tt.number, Expiration: cardExpiry(), CVV: tt.cvv})
				var failure *connector.Failure
				switch {
				case err == nil:
					t.Fatalf("the card was accepted")
				case tt.wantReason != "" && (!errors.As(err, &failure) || failure.Reason != tt.wantReason):
					t.Errorf("%v, want a failure %q", err, tt.wantReason)
				case tt.wantReason == "" && !strings.Contains(err.Error(), "cvv"):
					t.Errorf("%v, want an error naming the cvv field", err)
				}
				if strings.Contains(err.Error(), tt.number) {
					t.Errorf("the error %q shows the card number", err)
				}
			})
		})
	}
	if u := s.user(ada); len(u.Cards) != 2 {
		t.Errorf("the wallet holds %+v after refused cards, want ada's two", u.Cards)
	}
}

// TestSwitchCard: a good card becomes the default (the admin API agrees)
// and CardOnFile reports it; switching back to a card the wallet holds
// already makes it the default again.
func TestSwitchCard(t *testing.T) {
	t.Parallel()
	pool := sharedPool(t)
	s := newShop(t)
	site := New(s.URL)
	state := mustLogin(t, pool, site, ada)
	exp := cardExpiry()

	// Without a user, the form gets "Card holder" and postal code 00000.
	inSession(t, pool, state, func(ctx context.Context, sess *browser.Session) {
		if err := site.SwitchCard(ctx, sess, &connector.Card{Number: "5555555555554444", Expiration: exp, CVV: ptr("321")}); err != nil {
			t.Fatalf("switch to a good card: %v", err)
		}
	})
	u := s.user(ada)
	i := slices.IndexFunc(u.Cards, func(c refshop.Card) bool { return c.Default })
	if i < 0 || u.Cards[i].Last4 != "4444" || fmt.Sprintf("%02d/%d", u.Cards[i].ExpMonth, u.Cards[i].ExpYear) != exp {
		t.Fatalf("the shop's default card is %+v, want the Mastercard 4444 expiring %s", u.Cards, exp)
	}

	inSession(t, pool, state, func(ctx context.Context, sess *browser.Session) {
		got, err := site.CardOnFile(ctx, sess)
		if err != nil {
			t.Fatalf("card on file: %v", err)
		}
		if want := (connector.CardSummary{Brand: "mastercard", LastFour: "4444", Expiration: exp}); *got != want {
			t.Errorf("card on file %+v, want %+v", *got, want)
		}
		if err := site.SwitchCard(ctx, sess, &connector.Card{User: cardHolderJSON, Number: "4111 1111 1111 1111", Expiration: exp, CVV: ptr("555")}); err != nil {
			t.Fatalf("switch to a second card: %v", err)
		}
		if err := site.SwitchCard(ctx, sess, &connector.Card{User: cardHolderJSON, Number: "5555555555554444", Expiration: exp, CVV: ptr("321")}); err != nil {
			t.Fatalf("switch back to a card in the wallet: %v", err)
		}
	})
	u = s.user(ada)
	if i := slices.IndexFunc(u.Cards, func(c refshop.Card) bool { return c.Default }); i < 0 || u.Cards[i].Last4 != "4444" || len(u.Cards) != 4 {
		t.Errorf("after switching back, the cards are %+v", u.Cards)
	}
}

// TestCardTasksLoggedOut: after a password change, card tasks report
// ErrLoggedOut.
func TestCardTasksLoggedOut(t *testing.T) {
	t.Parallel()
	pool := sharedPool(t)
	s := newShop(t)
	site := New(s.URL)
	state := mustLogin(t, pool, site, ada)
	s.admin(http.MethodPost, "/admin/api/users/"+url.PathEscape(ada)+"/password", map[string]string{"password": "a-new-password"}, nil)
	inSession(t, pool, state, func(ctx context.Context, sess *browser.Session) {
		if err := site.SwitchCard(ctx, sess, &connector.Card{Number: "4242424242424242", Expiration: cardExpiry(), CVV: ptr("123")}); !errors.Is(err, connector.ErrLoggedOut) {
			t.Errorf("switch card: %v, want ErrLoggedOut", err)
		}
		if _, err := site.CardOnFile(ctx, sess); !errors.Is(err, connector.ErrLoggedOut) {
			t.Errorf("card on file: %v, want ErrLoggedOut", err)
		}
	})
}

// TestCardOnFileWithoutCards: a wallet without cards is a failure with the
// public reason, which the SDK runtime reports as is.
func TestCardOnFileWithoutCards(t *testing.T) {
	t.Parallel()
	pool := sharedPool(t)
	s := newShop(t)
	site := New(s.URL)
	state := mustLogin(t, pool, site, "empty@refshop.example")
	inSession(t, pool, state, func(ctx context.Context, sess *browser.Session) {
		_, err := site.CardOnFile(ctx, sess)
		var failure *connector.Failure
		if !errors.As(err, &failure) || failure.Reason != "did not receive payment method information" {
			t.Errorf("card on file of an empty wallet: %v", err)
		}
	})
}

// TestDetect asks the password-reset page: ada's e-mail and phone number
// have an account created on the day the admin API says; an unknown
// e-mail has none.
func TestDetect(t *testing.T) {
	t.Parallel()
	pool := sharedPool(t)
	s := newShop(t)
	site := New(s.URL)
	u := s.user(ada)
	created := midnight(u.CreatedAt)
	tests := []struct {
		name string
		req  connector.DetectionRequest
		want *connector.DetectedAccount
	}{
		{"e-mail", connector.DetectionRequest{Email: ptr("Ada@RefShop.example")},
			&connector.DetectedAccount{MerchantID: 114, Source: "email", LoginMethod: "PASSWORD", AccountCreatedAt: created}},
		{"phone", connector.DetectionRequest{PhoneNumber: ptr("(415) 555-0100")},
			&connector.DetectedAccount{MerchantID: 114, Source: "phone", LoginMethod: "PASSWORD", AccountCreatedAt: created}},
		{"unknown e-mail", connector.DetectionRequest{Email: ptr("nobody@example.com")}, nil},
		{"nothing the shop can look up", connector.DetectionRequest{ProcessorToken: ptr("processor-token-1")}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
			defer cancel()
			sess, err := pool.NewSession(ctx, browser.SessionOptions{Label: "refshop/detect"})
			if err != nil {
				t.Fatal(err)
			}
			defer sess.Close()
			got, err := site.Detect(ctx, sess, &tt.req)
			if err != nil {
				t.Fatalf("detect: %v", err)
			}
			if (got == nil) != (tt.want == nil) || (got != nil && *got != *tt.want) {
				t.Errorf("detect: %+v, want %+v", got, tt.want)
			}
		})
	}
}
