package cursor

import (
	"encoding/base64"
	"testing"
	"unicode/utf8"
)

// FuzzDecode feeds Decode what a client can send as a cursor. A cursor it
// accepts names a position that Encode gives back in the same scope and in
// no other; a cursor Encode makes decodes to its position.
func FuzzDecode(f *testing.F) {
	b64 := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	for _, s := range []string{
		Encode("acct", 42), Encode("", 0), Encode("user-1", 1<<62), "", "%%%", Encode("acct", 1) + "=",
		b64(`{"v":1,"a":"acct","p":-1}`), b64(`{"V":1,"A":"acct","P":7}`), b64(`{"v":1,"a":"acct","p":1e3}`),
		b64(`{"v":1,"a":"acct","p":1,"a":"other"}`), b64(`null`), b64(`{"v":1.0,"a":"acct","p":9223372036854775807}`),
	} {
		f.Add(s, "acct", int64(42))
	}
	f.Fuzz(func(t *testing.T, s, scope string, position int64) {
		if pos, ok := Decode(s, scope); ok {
			if pos < 0 {
				t.Fatalf("Decode(%q) = %d: a negative position", s, pos)
			}
			if _, ok := Decode(s, scope+"x"); ok {
				t.Fatalf("Decode(%q) accepted in scope %q and %q", s, scope, scope+"x")
			}
			if got, ok := Decode(Encode(scope, pos), scope); !ok || got != pos {
				t.Fatalf("re-encoding position %d of scope %q decodes to %d, %v", pos, scope, got, ok)
			}
		}
		// Scopes are ids Hitch made: valid UTF-8 (JSON would replace
		// other bytes) and short enough for a cursor under MaxLength.
		if position < 0 || !utf8.ValidString(scope) || len(Encode(scope, position)) > MaxLength {
			return
		}
		c := Encode(scope, position)
		if got, ok := Decode(c, scope); !ok || got != position {
			t.Fatalf("Decode(Encode(%q, %d)) = %d, %v", scope, position, got, ok)
		}
		if _, ok := Decode(c, scope+"x"); ok {
			t.Fatalf("a cursor of scope %q decoded in scope %q", scope, scope+"x")
		}
	})
}
