package reqlog

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
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
			want: `{"card":"[redacted]","task_id":7,"user":"[redacted]"}`},
		{name: "user is redacted on /card only", path: "/session/create",
			body: `{"user": "kept", "external_user_id": "u1", "processor_token": "tok", "email": "a@example.com"}`,
			want: `{"email":"[redacted]","external_user_id":"u1","processor_token":"[redacted]","user":"kept"}`, user: "u1"},
		{name: "bearer values under any key", path: "/session/extend",
			body: `{"session_id": "sess_abc", "note": "hsk_x", "list": ["whsec_y", "csec_z", "plain"]}`,
			want: `{"list":["[redacted]","[redacted]","plain"],"note":"[redacted]","session_id":"[redacted]"}`},
		{name: "card numbers anywhere, not other long numbers", path: "/x",
			body: `{"a": "pay 4242 4242 4242 4242 now", "b": 4242424242424242, "c": "1795860045642282394", "d": "4242424242424241"}`,
			want: `{"a":"pay [redacted card number] now","b":"[redacted card number]","c":"1795860045642282394","d":"4242424242424241"}`},
		{name: "card numbers beside other digits", path: "/x",
			body: `{"a": "1-4242424242424242-1230", "b": "4242 4242 4242 4242 12 30 123", "c": "2 3 4 5 6 7 8 9"}`,
			want: `{"a":"1-[redacted card number]-1230","b":"[redacted card number] 12 30 123","c":"2 3 4 5 6 7 8 9"}`},
		{name: "secret-like keys", path: "/webhooks/endpoints",
			body: `{"secret": "x", "client_secret": "y", "Password": "z", "encrypted_card": "j", "jwe": "k", "otp": "1", "answers": ["a"]}`,
			want: `{"Password":"[redacted]","answers":"[redacted]","client_secret":"[redacted]","encrypted_card":"[redacted]","jwe":"[redacted]","otp":"[redacted]","secret":"[redacted]"}`},
		{name: "error body", path: "/accounts/get",
			body: `{"error_type": "USER_ERROR", "error_code": "USER_NOT_FOUND", "request_id": "req_1"}`,
			want: `{"error_code":"USER_NOT_FOUND","error_type":"USER_ERROR","request_id":"req_1"}`, errorCode: "USER_NOT_FOUND"},
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
