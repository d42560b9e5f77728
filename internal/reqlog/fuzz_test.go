package reqlog

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tidwall/gjson"
)

// FuzzRedactBody holds the redactor to what the log relies on, whatever a
// caller sends: a body is taken as JSON exactly when encoding/json takes
// it; what is stored is valid UTF-8, is JSON unless it was cut, and holds
// no card number and no Hitch bearer value, on any path.
func FuzzRedactBody(f *testing.F) {
	if accounts, err := os.ReadFile("testdata/accounts.json"); err == nil {
		f.Add("/accounts/get", string(accounts))
	}
	for _, body := range []string{
		`{"task_id": 7, "card": {"number": "4242424242424242", "cvv": "123"}}`,
		`{"a": "\u0034242424242424242", "b": "sess\u005fx", "4242 4242 4242 4242": [1, -4242424242424242e1]}`,
		`["whsec_1", {"x": null, "token": null}, "é\ud800"]`,
		`{} {"cvv": "123"}`, `{"a": 01}`, "{\"a\": \"\xff\"}",
	} {
		f.Add("/card", body)
		f.Add("/x", body)
	}
	f.Fuzz(func(t *testing.T, path, body string) {
		if gjson.Valid(body) != json.Valid([]byte(body)) {
			t.Fatalf("gjson takes %q as JSON: %v, encoding/json: %v", body, gjson.Valid(body), json.Valid([]byte(body)))
		}
		for _, request := range []bool{false, true} {
			got := redactBody(path, "application/json", []byte(body), len(body), false, request)
			text := got.Text
			if !utf8.ValidString(text) || !utf8.ValidString(got.ExternalUserID) || !utf8.ValidString(got.ErrorCode) {
				t.Fatalf("%q stored as invalid UTF-8 %q", body, text)
			}
			if json.Valid([]byte(body)) && !strings.HasSuffix(text, truncatedMark) && !json.Valid([]byte(text)) {
				t.Fatalf("%q stored as %q, not JSON", body, text)
			}
			for _, s := range []string{text, got.ExternalUserID} {
				if masked := maskCardNumbers(s); masked != s {
					t.Fatalf("%q stored %q, which holds a card number", body, s)
				}
				for _, p := range secretPrefixes {
					if strings.Contains(s, p) {
						t.Fatalf("%q stored %q, which holds %q", body, s, p)
					}
				}
			}
		}
	})
}
