package audit_test

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/hitchdev/hitch/internal/audit"
	"github.com/hitchdev/hitch/internal/store"
	"github.com/hitchdev/hitch/internal/store/storetest"
)

var update = flag.Bool("update", false, "rewrite testdata/chain.json")

// vector is one record of testdata/chain.json and the hash it must have.
type vector struct {
	ID          string  `json:"id"`
	ClientID    string  `json:"client_id"`
	Seq         int64   `json:"seq"`
	Datetime    string  `json:"datetime"`
	Action      string  `json:"action"`
	Outcome     string  `json:"outcome"`
	ActorName   string  `json:"actor_name"`
	ActorEmail  string  `json:"actor_email"`
	TargetType  string  `json:"target_type"`
	TargetName  *string `json:"target_name"`
	Environment string  `json:"environment"`
	IP          string  `json:"ip"`
	UserAgent   string  `json:"user_agent"`
	Hash        string  `json:"hash"`
}

// TestHashVectors holds Hash to the chain in testdata/chain.json, so that
// another implementation of the documented encoding can be checked against
// it, and a change of the encoding is seen.
func TestHashVectors(t *testing.T) {
	t.Parallel()
	path := filepath.Join("testdata", "chain.json")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var vectors []vector
	if err := json.Unmarshal(b, &vectors); err != nil {
		t.Fatal(err)
	}
	if len(vectors) < 3 {
		t.Fatalf("%d vectors, want at least 3", len(vectors))
	}
	var prev []byte
	for i := range vectors {
		v := &vectors[i]
		at, err := time.Parse(time.RFC3339Nano, v.Datetime)
		if err != nil {
			t.Fatal(err)
		}
		r := &store.AuditRecord{ID: v.ID, ClientID: v.ClientID, Seq: v.Seq, CreatedAt: at, Action: v.Action, Outcome: v.Outcome,
			ActorName: v.ActorName, ActorEmail: v.ActorEmail, TargetType: v.TargetType, TargetName: v.TargetName,
			Environment: v.Environment, IP: v.IP, UserAgent: v.UserAgent}
		got := hex.EncodeToString(audit.Hash(prev, r))
		if *update {
			v.Hash = got
		} else if got != v.Hash {
			t.Errorf("record %d: hash %s, want %s", v.Seq, got, v.Hash)
		}
		prev, _ = hex.DecodeString(got)
	}
	if *update {
		b, _ := json.MarshalIndent(vectors, "", "  ")
		if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func write(t *testing.T, st store.Store, log *audit.Log, clientID, action string) *store.AuditRecord {
	t.Helper()
	var rec *store.AuditRecord
	err := st.InTx(context.Background(), func(ex store.Executor) error {
		var err error
		name := "ada@example.com"
		rec, err = log.Write(context.Background(), ex, audit.Entry{ClientID: clientID, Environment: "development", Action: action,
			Actor: audit.Actor{Name: "Ada", Email: "ada@example.com"}, TargetType: audit.TargetMember, TargetName: &name,
			Origin: audit.Origin{IP: "192.0.2.1", UserAgent: "test"}})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

func newClient(t *testing.T, st store.Store, id string) {
	t.Helper()
	if _, err := st.ClientInsert(context.Background(), &store.ClientInsertParams{ID: id, Name: id, Environment: "development",
		CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
}

// Verify accepts an intact chain, written by concurrent writers, and names
// the first record of a chain changed, cut or truncated with raw SQL.
func TestVerify(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		log := audit.NewLog(time.Now)
		newClient(t, st, "client-a")
		newClient(t, st, "client-b")
		if head, err := audit.Verify(ctx, st, "client-a"); err != nil || head.Records != 0 || head.Hash != nil {
			t.Fatalf("empty chain: %+v %v", head, err)
		}
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				for range 10 {
					write(t, st, log, "client-a", audit.ActionMemberAdd)
				}
			})
		}
		wg.Wait()
		write(t, st, log, "client-b", audit.ActionSignIn)
		head, err := audit.Verify(ctx, st, "client-a")
		if err != nil || head.Records != 40 {
			t.Fatalf("intact chain: %+v %v", head, err)
		}
		first, _ := st.AuditRecordGetBySeq(ctx, "client-a", 1)
		if first.PrevHash != nil {
			t.Fatalf("the first record has prev_hash %x", first.PrevHash)
		}

		// A changed field.
		storetest.ExecRaw(t, st, `UPDATE audit_records SET actor_email = 'mallory@example.com' WHERE client_id = 'client-a' AND seq = 17`)
		_, err = audit.Verify(ctx, st, "client-a")
		var b *audit.BreakError
		if !errors.As(err, &b) || b.Seq != 17 || b.ID == "" || b.ClientID != "client-a" {
			t.Fatalf("changed record: %v", err)
		}
		heads, err := audit.VerifyAll(ctx, st)
		if !audit.IsBreak(err) || len(heads) != 1 || heads[0].ClientID != "client-b" {
			t.Fatalf("VerifyAll: %v %v", heads, err)
		}
		// Every broken chain is reported, not only the first.
		write(t, st, log, "client-b", audit.ActionSignIn)
		storetest.ExecRaw(t, st, `UPDATE audit_records SET actor_email = 'mallory@example.com' WHERE client_id = 'client-b' AND seq = 2`)
		heads, err = audit.VerifyAll(ctx, st)
		broken := map[string]int64{}
		for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
			if errors.As(e, &b) {
				broken[b.ClientID] = b.Seq
			}
		}
		if len(heads) != 0 || len(broken) != 2 || broken["client-a"] != 17 || broken["client-b"] != 2 {
			t.Fatalf("VerifyAll with two broken chains: %v, %v", heads, err)
		}
		storetest.ExecRaw(t, st, `UPDATE audit_records SET actor_email = 'ada@example.com' WHERE client_id = 'client-b' AND seq = 2`)
		storetest.ExecRaw(t, st, `UPDATE audit_records SET actor_email = 'ada@example.com' WHERE client_id = 'client-a' AND seq = 17`)
		if _, err := audit.Verify(ctx, st, "client-a"); err != nil {
			t.Fatalf("restored: %v", err)
		}

		// A removed record in the middle, then the last one.
		storetest.ExecRaw(t, st, `DELETE FROM audit_records WHERE client_id = 'client-a' AND seq = 40`)
		if _, err := audit.Verify(ctx, st, "client-a"); !errors.As(err, &b) || b.Seq != 40 || b.ID != "" {
			t.Fatalf("truncated chain: %v", err)
		}
		storetest.ExecRaw(t, st, `DELETE FROM audit_records WHERE client_id = 'client-a' AND seq = 20`)
		if _, err := audit.Verify(ctx, st, "client-a"); !errors.As(err, &b) || b.Seq != 20 {
			t.Fatalf("cut chain: %v", err)
		}
		// The other developer's chain is untouched.
		if head, err := audit.Verify(ctx, st, "client-b"); err != nil || head.Records != 2 {
			t.Fatalf("client-b: %+v %v", head, err)
		}
	})
}
