package api

import (
	"bytes"
	"errors"
	"net/http/httptest"
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
