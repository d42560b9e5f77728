// Package cursor encodes the opaque cursors of Hitch's listings: a position
// in a sequence that belongs to one scope (an account's transactions, a
// user's detected accounts). A cursor is bound to its scope, so one handed
// out for another account, user or developer is refused like a malformed
// one, and it never expires: its form is versioned.
package cursor

import (
	"encoding/base64"
	"encoding/json"
)

// MaxLength bounds a cursor on the way in; real ones are under 100 bytes.
const MaxLength = 256

// payload is what a cursor holds. Scope is "a" for the account that
// transaction cursors were first bound to; the name stays so that those
// cursors keep working.
type payload struct {
	Version  int    `json:"v"`
	Scope    string `json:"a"`
	Position int64  `json:"p"`
}

// Encode returns the cursor of position in scope.
func Encode(scope string, position int64) string {
	b, _ := json.Marshal(payload{Version: 1, Scope: scope, Position: position})
	return base64.RawURLEncoding.EncodeToString(b)
}

// Decode returns the position of a cursor of scope; ok is false when s is
// malformed or of another scope.
func Decode(s, scope string) (position int64, ok bool) {
	if len(s) > MaxLength {
		return 0, false
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return 0, false
	}
	var p payload
	if err := json.Unmarshal(b, &p); err != nil || p.Version != 1 || p.Scope != scope || p.Position < 0 {
		return 0, false
	}
	return p.Position, true
}
