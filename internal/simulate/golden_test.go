package simulate

import (
	"crypto/sha256"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite testdata/histories.golden")

// TestGoldenHistories pins a digest of a few whole histories and their
// subscriptions, one per kind of merchant and the test users, so that a
// history that changes on another machine, architecture or Go release
// fails here. Run with -update after a deliberate change, and read the
// diff of docs/simulator.md's figures too.
func TestGoldenHistories(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	for _, id := range []int64{1, 4, 6, 9, 42, 61, 97, 19} {
		m := merchantByID(t, id)
		for _, u := range []string{"user-1", "user-2", UserEveryStatus, UserPlanChange} {
			s := Seed{ClientID: "cli_golden", ExternalUserID: u, MerchantID: id}
			orders := History(s, m, time.Time{}, testNow)
			doc, err := json.Marshal(struct {
				Orders, Subscriptions any
			}{orders, Subscriptions(s, m, testNow)})
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&b, "%s %s %d %x\n", m.Domain, u, len(orders), sha256.Sum256(doc))
		}
	}
	const path = "testdata/histories.golden"
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got := b.String(); got != string(want) {
		t.Errorf("histories differ from %s:\n%s\nwant:\n%s", path, got, want)
	}
}
