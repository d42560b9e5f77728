package api_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"testing"

	"github.com/hitchdev/hitch/internal/api/apitest"
	"github.com/hitchdev/hitch/internal/store/storetest"
)

// digitRuns are the runs of six or more digits of an input: a card number,
// or part of one, that no refusal may repeat.
var digitRuns = regexp.MustCompile(`[0-9]{6,}`)

// FuzzCardRefusals posts the plain form of POST /card with whatever user
// and card objects the fuzzer makes (valid JSON or not) for an account
// that takes a card: no refusal repeats six consecutive digits of them,
// and every answer is documented.
func FuzzCardRefusals(f *testing.F) {
	h := newHarness(f, storetest.OpenSQLite(f))
	h.authenticated(f, "u1", 1, "card-1", nil)
	validator := apitest.Load(f)
	user := `{"name": {"first_name": "Ada", "last_name": "Lovelace"}, "address": {"street": "1 Main St", "city": "New York",
		"region": "NY", "postal_code": "10001", "country": "US"}, "phone_number": "+12125550123"}`
	for _, s := range [][2]string{
		{user, `{"number": "4242424242424242", "expiration": "12/2031", "cvv": "123"}`},
		{user, `{"4242424242424242": "12/2031"}`},
		{user, `{"number": "4242424242424242", "number": "4242424242424242"}`},
		{user, `{"number": 4242424242424242}`},
		{user, `{"number": "4242424242424241", "expiration": "12/2031", "cvv": "123"}`},
		{`{"name": {"424242424242": "x"}}`, `{}`},
		{`{"address": {"postal_code": "1000199999"}}`, `{}`},
		{`{"phone_number": "212555012345"}`, `{}`},
		{user, `{}, "424242424242": 1`},
		{user, `{"number": "4242424242424242"`},
		{`null`, `[4242424242424242]`},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, user, card string) {
		if len(user)+len(card) > 4096 {
			t.Skip("byte offsets of long bodies could look like card digits")
		}
		body := `{"external_user_id": "u1", "merchant_id": 1, "user": ` + user + `, "card": ` + card + `}`
		req, err := http.NewRequest("POST", h.url+"/card", bytes.NewReader([]byte(body)))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.SetBasicAuth(h.clientID, h.secret)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if err := validator.ValidateResponse("POST", "/card", resp.StatusCode, resp.Header, data); err != nil {
			t.Fatalf("%d %s: %v", resp.StatusCode, data, err)
		}
		if resp.StatusCode == http.StatusOK {
			return
		}
		if resp.StatusCode >= 500 {
			t.Fatalf("%d %s", resp.StatusCode, data)
		}
		var e struct {
			Message string `json:"error_message"`
		}
		if err := json.Unmarshal(data, &e); err != nil || e.Message == "" {
			t.Fatalf("error body %s: %v", data, err)
		}
		for _, run := range digitRuns.FindAllString(user+card, -1) {
			for i := 0; i+6 <= len(run); i++ {
				if bytes.Contains([]byte(e.Message), []byte(run[i:i+6])) {
					t.Fatalf("%q repeats %s of the input", e.Message, run[i:i+6])
				}
			}
		}
	})
}
