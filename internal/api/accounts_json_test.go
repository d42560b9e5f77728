package api

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"
)

func TestAppendAccountMatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 21, 19, 56, 9, 584305000, time.UTC)
	status, action := "authenticated", "success"
	odd := "quote\" back\\ <tag> & ctrl\x01\x1f nl\n tab\t é 日本 \u2028\u2029 bad\xff end"
	var full, empty, weird accountJSON
	full.Merchant = merchantRef{ID: 44, Name: "Amazon", Logo: "http://127.0.0.1:8080/merchants/44/logo.svg"}
	full.Connection.Status = "connected"
	full.Connection.Scopes = []scopeJSON{{Type: "update_card"}, {Type: "cancel"}}
	full.Lifecycle.Status = &status
	full.LastUserAction.AttemptedAt = &at
	full.LastUserAction.Status = &action
	empty.Connection.Scopes = []scopeJSON{}
	weird = full
	weird.Merchant.Name = odd
	weird.Lifecycle.Status = &odd
	noNanos := at.Truncate(time.Second)
	weird.LastUserAction.AttemptedAt = &noNanos

	for name, a := range map[string]accountJSON{"full": full, "empty": empty, "weird": weird} {
		want, err := json.Marshal(a)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendAccount(nil, &a); !bytes.Equal(got, want) {
			t.Errorf("%s:\n got %s\nwant %s", name, got, want)
		}
	}
	list := []accountJSON{full, empty, weird}
	want, _ := json.Marshal(list)
	if got := appendAccounts(nil, list); !bytes.Equal(got, want) {
		t.Errorf("list:\n got %s\nwant %s", got, want)
	}
	want, _ = json.Marshal([]accountJSON{})
	if got := appendAccounts(nil, []accountJSON{}); !bytes.Equal(got, want) {
		t.Errorf("empty list: got %s, want %s", got, want)
	}
}

func FuzzAppendJSONString(f *testing.F) {
	for _, s := range []string{"", "plain", "\"\\<>&", "\x00\x1f\x7f", "é日本\u2028", "\xff\xfe", "a\xc3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendJSONString(nil, s); !bytes.Equal(got, want) {
			t.Fatalf("appendJSONString(%q) = %s, want %s", s, got, want)
		}
	})
}
