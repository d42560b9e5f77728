package cursor

import (
	"encoding/base64"
	"testing"
)

func TestRoundTrip(t *testing.T) {
	for _, pos := range []int64{0, 1, 1 << 40} {
		c := Encode("scope-1", pos)
		got, ok := Decode(c, "scope-1")
		if !ok || got != pos {
			t.Errorf("Decode(Encode(%d)) = %d, %v", pos, got, ok)
		}
		if _, ok := Decode(c, "scope-2"); ok {
			t.Errorf("a cursor of scope-1 decoded in scope-2")
		}
	}
}

// A cursor handed out before this package existed still decodes.
func TestTransactionCursorForm(t *testing.T) {
	old := base64.RawURLEncoding.EncodeToString([]byte(`{"v":1,"a":"acct","p":42}`))
	if got, ok := Decode(old, "acct"); !ok || got != 42 {
		t.Fatalf("Decode = %d, %v", got, ok)
	}
	if Encode("acct", 42) != old {
		t.Fatalf("Encode changed form: %s", Encode("acct", 42))
	}
}

func TestRejects(t *testing.T) {
	b64 := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	for _, c := range []string{
		"", "%%%", "not base64!", b64(`{}`), b64(`{"v":2,"a":"s","p":1}`), b64(`{"v":1,"a":"s","p":-1}`),
		b64(`{"v":1,"a":"s","p":"1"}`), b64(`[1]`), b64(`{"v":1,"a":"s","p":1`), Encode("s", 1) + "=",
		string(make([]byte, MaxLength+1)),
	} {
		if _, ok := Decode(c, "s"); ok {
			t.Errorf("Decode(%q) accepted", c)
		}
	}
}
