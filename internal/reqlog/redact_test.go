package reqlog

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestRedactBody(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, path, contentType, body string
		want                          string
		user, errorCode               string
	}{
		{name: "card form", path: "/card",
			body: `{"task_id": 7, "card": {"number": "4242424242424242", "cvv": "123"}, "user": {"name": {"first_name": "Ada"}}}`,
			want: `{"task_id":7,"card":"[redacted]","user":"[redacted]"}`},
		{name: "user is redacted on /card only", path: "/session/create",
			body: `{"user": "kept", "external_user_id": "u1", "processor_token": "tok", "email": "a@example.com"}`,
			want: `{"user":"kept","external_user_id":"u1","processor_token":"[redacted]","email":"[redacted]"}`, user: "u1"},
		{name: "bearer values under any key", path: "/session/extend",
			body: `{"session_id": "sess_abc", "note": "hsk_x", "list": ["whsec_y", "csec_z", "plain"]}`,
			want: `{"session_id":"[redacted]","note":"[redacted]","list":["[redacted]","[redacted]","plain"]}`},
		{name: "card numbers anywhere, not other long numbers", path: "/x",
			body: `{"a": "pay 4242 4242 4242 4242 now", "b": 4242424242424242, "c": "1795860045642282394", "d": "4242424242424241"}`,
			want: `{"a":"pay [redacted card number] now","b":"[redacted card number]","c":"1795860045642282394","d":"4242424242424241"}`},
		{name: "card numbers beside other digits", path: "/x",
			body: `{"a": "1-4242424242424242-1230", "b": "4242 4242 4242 4242 12 30 123", "c": "2 3 4 5 6 7 8 9"}`,
			want: `{"a":"1-[redacted card number]-1230","b":"[redacted card number] 12 30 123","c":"2 3 4 5 6 7 8 9"}`},
		{name: "secret-like keys", path: "/webhooks/endpoints",
			body: `{"secret": "x", "client_secret": "y", "Password": "z", "encrypted_card": "j", "jwe": "k", "otp": "1", "answers": ["a"]}`,
			want: `{"secret":"[redacted]","client_secret":"[redacted]","Password":"[redacted]","encrypted_card":"[redacted]","jwe":"[redacted]","otp":"[redacted]","answers":"[redacted]"}`},
		{name: "error body", path: "/accounts/get",
			body: `{"error_type": "USER_ERROR", "error_code": "USER_NOT_FOUND", "request_id": "req_1"}`,
			want: `{"error_type":"USER_ERROR","error_code":"USER_NOT_FOUND","request_id":"req_1"}`, errorCode: "USER_NOT_FOUND"},
		{name: "escapes are read before they are checked", path: "/x",
			body: `{"a": "\u0034242424242424242", "b": "sess\u005fx", "c": "tab\tkept", "d": "<kept>"}`,
			want: `{"a":"[redacted card number]","b":"[redacted]","c":"tab\tkept","d":"<kept>"}`},
		{name: "keys holding secrets, repeated keys, null under a secret key", path: "/x",
			body: `{"4242424242424242": 1, "sess_k": {"n": null}, "x": 1, "x": "whsec_2", "token": null, "deep": [[{"pin": [1]}]]}`,
			want: `{"[redacted card number]":1,"[redacted]":{"n":null},"x":1,"x":"[redacted]","token":null,"deep":[[{"pin":"[redacted]"}]]}`},
		{name: "card data not in an object", path: "/card", body: `["4242424242424242", "123"]`, want: `"[redacted]"`},
		{name: "a list elsewhere", path: "/x", body: ` [1, true, null, "a"] `, want: `[1,true,null,"a"]`},
		{name: "a kept /card key holding an object", path: "/card",
			body: `{"task_id": {"number": "x"}, "external_user_id": "u2", "merchant_id": null}`,
			want: `{"task_id":"[redacted]","external_user_id":"u2","merchant_id":null}`, user: "u2"},
		{name: "not JSON", path: "/card", contentType: "text/plain", body: `{"card": {"number": "4242424242424242", "cvv": "123"`,
			want: `[body of 52 bytes not kept: not JSON (text/plain)]`},
		{name: "two documents", path: "/card", body: `{} {"cvv": "123"}`, want: `[body of 17 bytes not kept: not JSON (no content type)]`},
		{name: "empty", path: "/jwe/key", body: ``, want: ``},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := RedactRequestBody(tc.path, tc.contentType, []byte(tc.body), len(tc.body), false)
			text := got.Text
			var compact bytes.Buffer
			if json.Compact(&compact, []byte(text)) == nil {
				text = compact.String()
			}
			if text != tc.want {
				t.Errorf("got %s\nwant %s", got.Text, tc.want)
			}
			if got.ExternalUserID != tc.user || got.ErrorCode != tc.errorCode {
				t.Errorf("user %q, error code %q", got.ExternalUserID, got.ErrorCode)
			}
		})
	}
}

func TestRedactBodyLimits(t *testing.T) {
	t.Parallel()
	over := RedactBody("/card", "application/json", []byte(`{"card": {"number": "4242`), MaxCapturedBody+10, true)
	if !strings.Contains(over.Text, "not kept") || strings.Contains(over.Text, "4242") {
		t.Errorf("overflow: %s", over.Text)
	}
	long := `{"items": ["` + strings.Repeat("é", MaxStoredBody) + `"]}`
	got := RedactBody("/x", "application/json", []byte(long), len(long), false)
	if len(got.Text) > MaxStoredBody+len(truncatedMark) || !strings.HasSuffix(got.Text, truncatedMark) ||
		!strings.HasPrefix(got.Text, "{") {
		t.Errorf("long body: %d bytes, ends %q", len(got.Text), got.Text[len(got.Text)-20:])
	}
	bad := RedactBody("/x", "application/json", []byte("{\"a\": \"\xff\"}"), 11, false)
	if !utf8.ValidString(bad.Text) || !json.Valid([]byte(bad.Text)) {
		t.Errorf("invalid UTF-8 kept: %q", bad.Text)
	}
	deep := strings.Repeat(`{"a": [`, maxDepth/2) + `"[{\\\"[{"` + strings.Repeat("]}", maxDepth/2)
	if got := RedactBody("/x", "application/json", []byte(deep), len(deep), false); !json.Valid([]byte(got.Text)) {
		t.Errorf("a body %d deep: %s", maxDepth, got.Text)
	}
	deeper := `{"s": "[[{{", "a": [` + deep + `]}`
	if got := RedactBody("/x", "application/json", []byte(deeper), len(deeper), false); !strings.Contains(got.Text, "nested deeper") {
		t.Errorf("a body %d deep: %s", maxDepth+2, got.Text)
	}
	nul := RedactBody("/x", "application/json", []byte(`{"external_user_id": "a\u0000b"}`), 30, false)
	if nul.ExternalUserID != "ab" {
		t.Errorf("user with NUL: %q", nul.ExternalUserID)
	}
}

func TestRedactQuery(t *testing.T) {
	t.Parallel()
	q, user := RedactQuery("/accounts/get", "merchant_id=1&external_user_id=u%201&session=sess_x&token=t&n=4242424242424242")
	if q != "external_user_id=u+1&merchant_id=1&n=%5Bredacted+card+number%5D&session=%5Bredacted%5D&token=%5Bredacted%5D" || user != "u 1" {
		t.Errorf("query %q, user %q", q, user)
	}
}

// BenchmarkRedact redacts the answer of GET /accounts/get for ten linked
// accounts (testdata/accounts.json, as a development Hitch sent it): the
// writer's work per request of the accounts benchmark (bench/accounts).
//
//	go test ./internal/reqlog -run '^$' -bench Redact -count 3
func BenchmarkRedact(b *testing.B) {
	body, err := os.ReadFile("testdata/accounts.json")
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if out := RedactBody("/accounts/get", "application/json", body, len(body), false); out.Text == "" {
			b.Fatal("nothing kept")
		}
	}
}
