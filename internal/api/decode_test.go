package api

import (
	"bytes"
	"errors"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
)

// FuzzDecode: whatever the body, decode succeeds or answers a client error
// (never a panic, never an error that would become a 500).
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		`{"type":"link","external_user_id":"u"}`,
		`{"type":"link","type":"vault"}`,
		`{"metadata":{"a":"b","a":"c"}}`,
		`{"transactions":{"new":true,"old":1}}`,
		`[{"a":1}]`, `{"card_id":{"x":[1,{"y":2}]}}`, `{`, ``, "\xff", `{"a":1} {}`, `null`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, dst := range []any{&createSessionRequest{}, &devLinkRequest{}} {
			r := httptest.NewRequest("POST", "/", bytes.NewReader(body))
			r.Header.Set("Content-Type", "application/json")
			err := decode(r, dst)
			var e *Error
			if err != nil && (!errors.As(err, &e) || e.Status >= 500) {
				t.Fatalf("decode(%q) = %v, not a client error", body, err)
			}
		}
	})
}

// benchSessionBody is a typical POST /session/create body.
const benchSessionBody = `{"type": "card_switcher", "external_user_id": "user-8f3a2c", "card_id": "card-19",
	"email": "ada@example.com", "phone_number": "+14155550123", "metadata": {"plan": "gold", "source": "onboarding"}}`

// benchTransaction is one item of an ingestion batch, %d its number.
const benchTransaction = `{"external_id": "order-%d", "datetime": "2026-01-15T10:30:00Z",
	"url": "https://shop.example.com/orders/%[1]d", "order_status": "DELIVERED",
	"shipping": {"location": {"address": {"line1": "12 Analytical Way", "line2": "", "city": "New York",
		"region": "NY", "postal_code": "10001", "country": "US"}, "first_name": "Ada", "last_name": "Lovelace"}},
	"payment_methods": [{"external_id": "pm-1", "type": "CARD", "brand": "VISA", "last_four": "4242",
		"name": "Visa 4242", "transaction_amount": "54.10"}],
	"price": {"sub_total": "50.00", "adjustments": [{"type": "TAX", "label": "Sales tax", "amount": "4.10"}],
		"total": "54.10", "currency": "USD"},
	"products": [{"external_id": "p-1", "name": "Notebook", "description": "A5, dotted", "url": "https://shop.example.com/p/1",
		"image_url": "https://shop.example.com/p/1.jpg", "quantity": 2,
		"price": {"sub_total": "50.00", "total": "50.00", "unit_price": "25.00"}, "seller": null, "eligibility": ["HSA"]}]}`

// go test ./internal/api -run '^$' -bench Decode -benchmem
func BenchmarkDecode(b *testing.B) {
	b.Run("session", func(b *testing.B) {
		body := []byte(benchSessionBody)
		for b.Loop() {
			r := httptest.NewRequest("POST", "/", bytes.NewReader(body))
			r.Header.Set("Content-Type", "application/json")
			var req createSessionRequest
			if err := decode(r, &req); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("ingest-100", func(b *testing.B) {
		items := make([]string, 100)
		for i := range items {
			items[i] = fmt.Sprintf(benchTransaction, i)
		}
		body := []byte(`{"client_id": "c", "external_user_id": "u", "merchant_id": 1, "transactions": [` +
			strings.Join(items, ",") + `]}`)
		for b.Loop() {
			r := httptest.NewRequest("POST", "/", bytes.NewReader(body))
			r.Header.Set("Content-Type", "application/json")
			var req ingestTransactionsRequest
			if err := decodeLimit(r, &req, maxIngestBodyBytes); err != nil {
				b.Fatal(err)
			}
			if _, err := decodeItems[ingestTransaction]("transactions", req.Transactions); err != nil {
				b.Fatal(err)
			}
		}
	})
}
