package transaction

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/hitchdev/hitch/internal/event"
)

// withID must give exactly the bytes json.Marshal gives for the document
// with its id set, for both shapes ingestion stores.
func TestWithIDMatchesMarshal(t *testing.T) {
	t.Parallel()
	tx := benchOrder(7)
	normalize(&tx)
	tx.Shipping = &Shipping{Location: Location{Address: Address{Line1: "1 Main <St> & \"Co\"", City: "Springfield"}}}
	emptyFull, _ := json.Marshal(&tx)
	emptySync, _ := json.Marshal(syncShape(&tx))
	id := event.NewID()
	tx.ID = id
	wantFull, _ := json.Marshal(&tx)
	wantSync, _ := json.Marshal(syncShape(&tx))
	for _, c := range []struct{ empty, want []byte }{{emptyFull, wantFull}, {emptySync, wantSync}} {
		got, err := withID(c.empty, id)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, c.want) {
			t.Errorf("withID:\n got %s\nwant %s", got, c.want)
		}
	}
	for _, bad := range []string{`a"b`, `a\b`, "a\nb", "é", "<x>"} {
		if _, err := withID(emptyFull, bad); err == nil {
			t.Errorf("withID(%q) took an id that JSON would escape", bad)
		}
	}
	if _, err := withID([]byte(`{"external_id":"x"}`), id); err == nil {
		t.Error("withID took a document that does not start with an empty id")
	}
}
