package refconnector

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/hitchdev/hitch/connector"
)

func TestAmount(t *testing.T) {
	t.Parallel()
	tests := []struct{ shown, want string }{
		{"$12.34", "12.34"},
		{"$1,234.56", "1234.56"},
		{"-$5.00", "-5.00"},
		{"$0.00", "0.00"},
		{"-$0.00", "0.00"},
		{" $7.10 ", "7.10"},
		{"12.34", ""},
		{"$12", ""},
		{"$12.3", ""},
		{"$1e3.00", ""},
		{"", ""},
	}
	for _, tt := range tests {
		got, err := amount(tt.shown)
		if tt.want == "" {
			if err == nil {
				t.Errorf("amount(%q) = %q, want an error", tt.shown, got)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("amount(%q) = %q, %v; want %q", tt.shown, got, err, tt.want)
		}
	}
}

func TestExpiration(t *testing.T) {
	t.Parallel()
	tests := []struct{ exp, month, year string }{
		{"08/2029", "08", "2029"},
		{"8/2029", "08", "2029"},
		{"12/31", "12", "2031"},
		{"13/2029", "", ""},
		{"08-2029", "", ""},
		{"08/029", "", ""},
	}
	for _, tt := range tests {
		m, y, err := expiration(tt.exp)
		if tt.month == "" {
			if err == nil {
				t.Errorf("expiration(%q) = %s/%s, want an error", tt.exp, m, y)
			}
			continue
		}
		if err != nil || m != tt.month || y != tt.year {
			t.Errorf("expiration(%q) = %q, %q, %v; want %q, %q", tt.exp, m, y, err, tt.month, tt.year)
		}
	}
}

func TestHolderDetails(t *testing.T) {
	t.Parallel()
	tests := []struct {
		user         string
		name, postal string
	}{
		{`{"name": {"first_name": "Ada", "last_name": "Lovelace"}, "address": {"postal_code": "94110"}}`, "Ada Lovelace", "94110"},
		{`{"name": {"first_name": " Ada "}}`, "Ada", "00000"},
		{`{"address": {"postal_code": "10001"}}`, "Card holder", "10001"},
		{``, "Card holder", "00000"},
		{`not json`, "Card holder", "00000"},
	}
	for _, tt := range tests {
		name, postal := holderDetails(json.RawMessage(tt.user))
		if name != tt.name || postal != tt.postal {
			t.Errorf("holderDetails(%s) = %q, %q; want %q, %q", tt.user, name, postal, tt.name, tt.postal)
		}
	}
}

func TestBrandCode(t *testing.T) {
	t.Parallel()
	for shown, want := range map[string]string{
		"Visa": "VISA", "Mastercard": "MASTERCARD", "American Express": "AMEX", "Discover": "DISCOVER", "Card": "CARD",
	} {
		if got := brandCode(shown); got != want {
			t.Errorf("brandCode(%q) = %q, want %q", shown, got, want)
		}
	}
}

func TestSigninRefusal(t *testing.T) {
	t.Parallel()
	tests := []struct{ msg, reason string }{
		{"Your email or password is incorrect.", "credentials"},
		{"Your account is locked. Contact support.", "account"},
		{"Too many attempts. Please sign in again.", "too many attempts"},
		{"That code has expired. Please sign in again.", "otp timeout"},
		{"Something new.", ""},
		{"", ""},
	}
	for _, tt := range tests {
		err := signinRefusal(tt.msg)
		var failure *connector.Failure
		switch {
		case tt.reason == "" && errors.As(err, &failure):
			t.Errorf("signinRefusal(%q) = failure %q, want another error", tt.msg, failure.Reason)
		case tt.reason != "" && (!errors.As(err, &failure) || failure.Reason != tt.reason):
			t.Errorf("signinRefusal(%q) = %v, want failure %q", tt.msg, err, tt.reason)
		}
	}
}

func TestSubscriptionMapping(t *testing.T) {
	t.Parallel()
	rs := rawSubscription{ID: "sub_1", Name: "Plan", Price: "$179.00", Cycle: "Annual", CancelsOn: "2027-01-01",
		Start: "2025-01-01", LastBilled: "2026-01-01", NextBilling: "2027-01-01", Family: true}
	sub, err := rs.subscription()
	if err != nil {
		t.Fatal(err)
	}
	if sub.Status != "ACTIVE_CANCELLATION" || sub.BillingCycle != "ANNUALLY" || sub.ExpirationDate == nil ||
		*sub.ExpirationDate != "2027-01-01T00:00:00Z" || sub.NextRenewalDate != "" || sub.StartDate != "2025-01-01T00:00:00Z" ||
		sub.Price.Total != "179.00" || !sub.IsFamilyPlan {
		t.Errorf("mapped %+v", sub)
	}
	rs.Start = ""
	if _, err := rs.subscription(); err == nil {
		t.Error("a plan without a start date mapped without an error")
	}
}
