package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// keys rotate makes a new current key; the previous one retires after the
// grace period, and keys list shows both.
func TestKeysCommands(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, name string, env []string) {
		t.Parallel()
		type row struct {
			Kid       string     `json:"kid"`
			CreatedAt time.Time  `json:"created_at"`
			RetiresAt *time.Time `json:"retires_at"`
			Retired   bool       `json:"retired"`
		}
		list := func() []row {
			t.Helper()
			code, out, stderr := cli(t, env, "keys", "list", "--json")
			var rows []row
			if code != 0 || json.Unmarshal([]byte(out), &rows) != nil {
				t.Fatalf("keys list: %d %q %s", code, out, stderr)
			}
			return rows
		}
		if rows := list(); len(rows) != 0 {
			t.Fatalf("keys on a new database: %+v", rows)
		}
		rotate := func(args ...string) string {
			t.Helper()
			code, out, stderr := cli(t, env, append([]string{"keys", "rotate", "--json"}, args...)...)
			var jwk struct{ Kid, Alg, Kty, N string }
			if code != 0 || json.Unmarshal([]byte(out), &jwk) != nil || jwk.Kid == "" || jwk.Alg != "RSA-OAEP-256" ||
				strings.Contains(out, `"d"`) {
				t.Fatalf("keys rotate: %d %q %s", code, out, stderr)
			}
			return jwk.Kid
		}
		first := rotate()
		start := time.Now()
		second := rotate("--grace", "2h")
		rows := list()
		if len(rows) != 2 || rows[0].Kid != second || rows[1].Kid != first || rows[0].RetiresAt != nil ||
			rows[1].RetiresAt == nil || rows[1].Retired {
			t.Fatalf("after two rotations: %+v", rows)
		}
		if d := rows[1].RetiresAt.Sub(start); d < 2*time.Hour-time.Minute || d > 2*time.Hour+time.Minute {
			t.Fatalf("the first key retires %v after the rotation, want 2h", d)
		}
		// A grace of zero retires the others at once.
		third := rotate("--grace", "0s")
		rows = list()
		if len(rows) != 3 || rows[0].Kid != third || !rows[1].Retired || !rows[2].Retired {
			t.Fatalf("after rotating with no grace: %+v", rows)
		}
		code, out, _ := cli(t, env, "keys", "list")
		if code != 0 || !strings.Contains(out, third) || !strings.Contains(out, "retired") || !strings.Contains(out, "usable") {
			t.Fatalf("keys list as text: %d %q", code, out)
		}
		if code, _, stderr := cli(t, env, "keys", "rotate", "--bits", "1024"); code != 1 || !strings.Contains(stderr, "2048") {
			t.Fatalf("rotate --bits 1024: %d %q", code, stderr)
		}
	})
}
