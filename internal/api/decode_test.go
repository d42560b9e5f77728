package api

import (
	"bytes"
	"errors"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
)

// requestTypes makes an empty value of every request body type the API
// decodes, for FuzzDecode.
var requestTypes = []func() any{
	func() any { return &accountRequest{} }, func() any { return &cardRequest{} },
	func() any { return &detectRequest{} }, func() any { return &searchRequest{} },
	func() any { return &identifyRequest{} }, func() any { return &detectedPageRequest{} },
	func() any { return &ingestDetectionsRequest{} }, func() any { return &devLinkRequest{} },
	func() any { return &ingestTransactionsRequest{} }, func() any { return &ingestSubscriptionsRequest{} },
	func() any { return &linkSessionRequest{} }, func() any { return &linkMerchantsRequest{} },
	func() any { return &linkLoginRequest{} }, func() any { return &linkAnswerRequest{} },
	func() any { return &linkWaitRequest{} }, func() any { return &setLinkOriginsRequest{} },
	func() any { return &listMerchantsRequest{} }, func() any { return &createSessionRequest{} },
	func() any { return &extendSessionRequest{} }, func() any { return &taskClientRequest{} },
	func() any { return &taskResultRequest{} }, func() any { return &syncRequest{} },
	func() any { return &createEndpointRequest{} }, func() any { return &updateEndpointRequest{} },
	func() any { return &replayRequest{} }, func() any { return &signRequest{} },
	func() any { return &declareRequest{} }, func() any { return &claimRequest{} },
	func() any { return &workStepRequest{} }, func() any { return &workAnswerRequest{} },
	func() any { return &leaseRequest{} }, func() any { return &completeRequest{} },
}

// FuzzDecode feeds every request type's decoder any body. A refusal is a
// client error in the API's error body (400, or 413 past the size limit),
// never a 500 nor a panic; a body it accepts encodes and decodes back to
// the same value.
func FuzzDecode(f *testing.F) {
	for i, s := range []string{
		`{"type":"link","external_user_id":"u"}`,
		`{"type":"link","type":"vault"}`,
		`{"metadata":{"a":"b","a":"c"}}`,
		`{"transactions":{"new":true,"old":1}}`,
		`{"external_user_id":"u1","merchant_id":1,"cursor":"abc","limit":10}`,
		`{"url":"https://example.com/hook","events":["AUTHENTICATED"]}`,
		`{"payload":{"a":[{"b":1}]},"endpoint_id":"e"}`,
		`{"transactions":[{"id":"t1","price":"1.00"}]}`,
		`{"external_user_id":"u","merchant_id":9223372036854775807,"wait_seconds":-1}`,
		`[{"a":1}]`, `{"card_id":{"x":[1,{"y":2}]}}`, `{`, ``, "\xff", `{"a":1} {}`, `null`, `{"a":"\u0000"}`,
	} {
		f.Add(uint8(i*7), []byte(s)) // each seed with one type; the fuzzer varies it
	}
	for i := range requestTypes {
		f.Add(uint8(i), []byte(`{}`))
	}
	f.Fuzz(func(t *testing.T, which uint8, body []byte) {
		newDst := requestTypes[int(which)%len(requestTypes)]
		dst := newDst()
		r := httptest.NewRequest("POST", "/", bytes.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		err := decode(r, dst)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || (e.Status != 400 && e.Status != 413) || e.Type != TypeInvalidRequest || e.Message == "" {
				t.Fatalf("decode(%q) into %T = %#v, want a 400 or 413 invalid_request error", body, dst, err)
			}
			return
		}
		encoded, err := json.Marshal(dst, json.Deterministic(true))
		if err != nil {
			t.Fatalf("%T accepted %q but does not encode: %v", dst, body, err)
		}
		again := newDst()
		r = httptest.NewRequest("POST", "/", bytes.NewReader(encoded))
		r.Header.Set("Content-Type", "application/json")
		if err := decode(r, again); err != nil {
			t.Fatalf("%T accepted %q but refuses its own encoding %s: %v", dst, body, encoded, err)
		}
		reencoded, err := json.Marshal(again, json.Deterministic(true))
		if err != nil || !bytes.Equal(encoded, reencoded) {
			t.Fatalf("%T round trip changed %s into %s (%v)", dst, encoded, reencoded, err)
		}
	})
}

// TestDecode holds request bodies to the strict rules, each error naming the
// field and never quoting a value.
func TestDecode(t *testing.T) {
	t.Parallel()
	const secret = "4242424242424242" // a value that no message may echo
	cases := []struct {
		name        string
		contentType string // application/json when empty
		body        string
		dst         func() any
		status      int    // 0 when the body decodes
		message     string // the whole message
	}{
		{name: "valid", body: benchSessionBody, dst: newSession},
		{name: "charset parameter", contentType: "application/json; charset=utf-8", body: `{"type": "link"}`, dst: newSession},
		{name: "null field", body: `{"card_id": null}`, dst: newSession},
		{name: "unknown field", body: `{"colour": "` + secret + `"}`, dst: newSession,
			status: 400, message: "The colour field is not allowed."},
		{name: "unknown nested field", body: `{"transactions": {"new": true, "old": "` + secret + `"}}`, dst: newDevLink,
			status: 400, message: "The transactions.old field is not allowed."},
		{name: "duplicate name", body: `{"type": "link", "type": "vault"}`, dst: newSession,
			status: 400, message: "The type field appears more than once."},
		{name: "duplicate nested name", body: `{"metadata": {"a": "b", "a": "` + secret + `"}}`, dst: newSession,
			status: 400, message: "The metadata.a field appears more than once."},
		{name: "duplicate map key of digits", body: `{"metadata": {"7": "b", "7": "c"}}`, dst: newSession,
			status: 400, message: "The metadata.7 field appears more than once."},
		{name: "duplicate name in raw JSON", body: `{"payload": {"a": [{"b": 1, "b": 2}]}}`, dst: func() any { return &signRequest{} },
			status: 400, message: "The payload.a[0].b field appears more than once."},
		{name: "case-folded name", body: `{"Type": "link"}`, dst: newSession,
			status: 400, message: "The Type field is not allowed."},
		{name: "case-folded nested name", body: `{"transactions": {"NEW": true}}`, dst: newDevLink,
			status: 400, message: "The transactions.NEW field is not allowed."},
		{name: "wrong type", body: `{"merchant_id": "` + secret + `"}`, dst: newSession,
			status: 400, message: "The merchant_id field must be an integer."},
		{name: "wrong type nested in an array", body: `{"events": ["AUTHENTICATED", ` + secret + `]}`,
			dst:    func() any { return &createEndpointRequest{} },
			status: 400, message: "The events[1] field must be a string."},
		{name: "wrong type nested in an object", body: `{"transactions": {"new": "yes"}}`, dst: newDevLink,
			status: 400, message: "The transactions.new field must be a boolean."},
		{name: "trailing object", body: `{"type": "link"} {}`, dst: newSession,
			status: 400, message: "The request body must hold exactly one JSON object."},
		{name: "trailing data", body: `{"type": "link"} ` + secret, dst: newSession,
			status: 400, message: "The request body must hold exactly one JSON object."},
		{name: "invalid UTF-8", body: "{\"type\": \"li\xffnk\"}", dst: newSession,
			status: 400, message: "The request body must be valid UTF-8."},
		{name: "syntax error", body: `{"type": "link",}`, dst: newSession,
			status: 400, message: "The request body is not valid JSON (at byte 15)."},
		{name: "ends early", body: `{"type": "` + secret + `",`, dst: newSession,
			status: 400, message: "The request body is not valid JSON: it ends early."},
		{name: "empty body", body: ``, dst: newSession,
			status: 400, message: "The request body must be a JSON object."},
		{name: "white space", body: " \n", dst: newSession,
			status: 400, message: "The request body must be a JSON object."},
		{name: "null body", body: `null`, dst: newSession,
			status: 400, message: "The request body must be a JSON object."},
		{name: "array body", body: `[{"type": "link"}]`, dst: newSession,
			status: 400, message: "The request body must be a JSON object."},
		{name: "wrong content type", contentType: "text/plain", body: `{"type": "link"}`, dst: newSession,
			status: 415, message: "Request bodies must be JSON, sent with Content-Type: application/json."},
		{name: "no content type", contentType: "-", body: `{"type": "link"}`, dst: newSession,
			status: 415, message: "Request bodies must be JSON, sent with Content-Type: application/json."},
		{name: "too large", body: `{"type": "` + strings.Repeat("l", maxBodyBytes) + `"}`, dst: newSession,
			status: 413, message: fmt.Sprintf("The request body is larger than %d bytes.", maxBodyBytes)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := httptest.NewRequest("POST", "/", strings.NewReader(tc.body))
			switch tc.contentType {
			case "":
				r.Header.Set("Content-Type", "application/json")
			case "-":
			default:
				r.Header.Set("Content-Type", tc.contentType)
			}
			checkDecodeError(t, decode(r, tc.dst()), tc.status, tc.message)
		})
	}
}

// TestDecodeItems holds each item of an ingestion batch to decode's rules,
// naming the item by its index. (The body's decoding already refuses
// duplicate names within an item, as anywhere in raw JSON.)
func TestDecodeItems(t *testing.T) {
	t.Parallel()
	valid := `{"external_id": "o-1", "price": {"total": "10.80"}, "products": [{"price": {"unit_price": "5.40"}}]}`
	cases := []struct {
		name    string
		items   string
		message string // "" when the items decode
	}{
		{"valid", valid + `, ` + valid, ""},
		{"null item", `null, ` + valid, "The transactions[0] field must be an object."},
		{"item not an object", valid + `, "o-2"`, "The transactions[1] field must be an object."},
		{"wrong type in an item", valid + `, {"price": {"total": 10.8}}`, "The transactions[1].price.total field must be a string."},
		{"unknown field in an array in an item", `{"products": [{}, {"price": {"unit": "1"}}]}`,
			"The transactions[0].products[1].price.unit field is not allowed."},
		{"case-folded name in an item", `{"External_ID": "o-1"}`, "The transactions[0].External_ID field is not allowed."},
		{"duplicate name in an item", `{"url": "a", "url": "b"}`, "The transactions[0].url field appears more than once."},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := httptest.NewRequest("POST", "/", strings.NewReader(`{"transactions": [`+tc.items+`]}`))
			r.Header.Set("Content-Type", "application/json")
			var req ingestTransactionsRequest
			var items []ingestTransaction
			err := decode(r, &req)
			if err == nil {
				items, err = decodeItems[ingestTransaction]("transactions", req.Transactions)
			}
			status := 0
			if tc.message != "" {
				status = 400
			} else if len(items) != 2 || items[1].Price.Total != "10.80" {
				t.Errorf("items = %+v", items)
			}
			checkDecodeError(t, err, status, tc.message)
		})
	}
}

// checkDecodeError checks that err is nil when status is 0, else a client
// error of that status and message.
func checkDecodeError(t *testing.T, err error, status int, message string) {
	t.Helper()
	if status == 0 {
		if err != nil {
			t.Fatalf("error %v, want none", err)
		}
		return
	}
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v, want an *Error", err)
	}
	if e.Status != status || e.Message != message {
		t.Errorf("error %d %q, want %d %q", e.Status, e.Message, status, message)
	}
}

func newSession() any { return &createSessionRequest{} }
func newDevLink() any { return &devLinkRequest{} }

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
