package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hitchdev/hitch/internal/transaction"
)

// order is a minimal valid transaction for tests that do not need the
// simulator's realism.
func order(externalID, status string) transaction.Transaction {
	return transaction.Transaction{
		ExternalID:  externalID,
		Datetime:    time.Date(2026, 10, 1, 12, 0, 0, 0, time.UTC),
		URL:         "https://example.com/orders/" + externalID,
		OrderStatus: status,
		Shipping: &transaction.Shipping{Location: transaction.Location{FirstName: "Ada", LastName: "Lovelace",
			Address: transaction.Address{Line1: "1 Main St", City: "Austin", Region: "TX", PostalCode: "78701", Country: "US"}}},
		PaymentMethods: []transaction.PaymentMethod{{ExternalID: "pm-1", Type: "CARD", Brand: "VISA", LastFour: "4242", TransactionAmount: "10.80"}},
		Price: transaction.Price{SubTotal: "10.00", Total: "10.80", Currency: "USD",
			Adjustments: []transaction.Adjustment{{Type: "TAX", Label: "Tax", Amount: "0.80"}}},
		Products: []transaction.Product{{ExternalID: "p-1", Name: "Widget", Description: "A widget", URL: "https://example.com/p/1",
			ImageURL: "https://example.com/p/1.png", Quantity: 2,
			Price:  transaction.ProductPrice{SubTotal: "10.00", Total: "10.00", UnitPrice: "5.00"},
			Seller: &transaction.Seller{Name: "Widgets Inc", URL: "https://example.com/s/w"}}},
		LoyaltyMembership: &transaction.LoyaltyMembership{Tier: "Gold"},
	}
}

type syncPage struct {
	Merchant struct {
		ID   int64  `json:"id"`
		Name string `json:"name"`
	} `json:"merchant"`
	Transactions []map[string]any `json:"transactions"`
	NextCursor   *string          `json:"next_cursor"`
	HasMore      bool             `json:"has_more"`
	Limit        int              `json:"limit"`
}

// syncOnce posts one sync request without t, so that goroutines can call it.
func (h *harness) syncOnce(user string, merchantID int64, cursor *string, limit int) (*syncPage, error) {
	body, _ := json.Marshal(map[string]any{"external_user_id": user, "merchant_id": merchantID, "cursor": cursor, "limit": limit})
	req, err := http.NewRequest("POST", h.url+"/transactions/sync", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.SetBasicAuth(h.clientID, h.secret)
	resp, err := h.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != 200 {
		return nil, fmt.Errorf("sync: %d %s", resp.StatusCode, data)
	}
	var p syncPage
	if err := json.Unmarshal(data, &p); err != nil {
		return nil, err
	}
	if p.Limit != len(p.Transactions) || p.Limit > limit {
		return nil, fmt.Errorf("limit %d with %d transactions (asked %d)", p.Limit, len(p.Transactions), limit)
	}
	return p.check()
}

func (p *syncPage) check() (*syncPage, error) {
	if (len(p.Transactions) == 0) != (p.NextCursor == nil) {
		return nil, fmt.Errorf("next_cursor %v after %d transactions", p.NextCursor, len(p.Transactions))
	}
	for _, tx := range p.Transactions {
		for _, hidden := range []string{"shipping", "loyalty_membership"} {
			if _, ok := tx[hidden]; ok {
				return nil, fmt.Errorf("sync shape has %s", hidden)
			}
		}
	}
	return p, nil
}

// walker follows a sync from the start and then from its last cursor, as a
// developer does, collecting ids.
type walker struct {
	h      *harness
	cursor *string
	seen   map[string]int
	rnd    *rand.Rand
}

// walk reads pages until next_cursor is null.
func (w *walker) walk(user string, merchantID int64) error {
	for {
		p, err := w.h.syncOnce(user, merchantID, w.cursor, 1+w.rnd.IntN(7))
		if err != nil {
			return err
		}
		if p.NextCursor == nil {
			if p.HasMore {
				return fmt.Errorf("empty page with has_more")
			}
			return nil
		}
		for _, tx := range p.Transactions {
			w.seen[tx["id"].(string)]++
		}
		w.cursor = p.NextCursor
	}
}

// The property of restart-free sync: whatever the interleaving of
// ingestion batches (new and changed transactions) and sync walks with
// random limits, every walker ends with exactly the transactions that
// exist, each once, and changes are visible by id.
func TestTransactionSyncProperty(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		seed := uint64(time.Now().UnixNano())
		t.Logf("seed %d", seed)
		rnd := rand.New(rand.NewPCG(seed, 7))
		ctx := context.Background()
		linkCard(t, h.api, "walker", 1)
		key := transaction.AccountKey{ClientID: h.clientID, ExternalUserID: "walker", MerchantID: 1}

		var mu sync.Mutex
		ids := map[string]string{}    // external id → id
		status := map[string]string{} // id → latest status
		const batches = 25
		done := make(chan struct{})
		errs := make(chan error, 4)
		var wg sync.WaitGroup
		walkers := make([]*walker, 3)
		for i := range walkers {
			walkers[i] = &walker{h: h, seen: map[string]int{}, rnd: rand.New(rand.NewPCG(seed, uint64(i)))}
			w := walkers[i]
			wg.Go(func() {
				for {
					if err := w.walk("walker", 1); err != nil {
						errs <- err
						return
					}
					select {
					case <-done:
						return
					default:
					}
				}
			})
		}
		next := 0
		for range batches {
			var batch []transaction.Transaction
			mu.Lock()
			for range rnd.IntN(12) {
				next++
				batch = append(batch, order(fmt.Sprintf("o-%d", next), "ORDERED"))
			}
			for ext := range ids {
				if len(batch) >= 20 {
					break
				}
				switch rnd.IntN(4) {
				case 0:
					batch = append(batch, order(ext, "DELIVERED"))
				case 1:
					batch = append(batch, order(ext, status[ids[ext]])) // unchanged
				}
			}
			mu.Unlock()
			if len(batch) == 0 {
				continue
			}
			got, err := h.transactions.IngestTransactions(ctx, key, batch, nil)
			if err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			n := 0
			for _, tx := range batch {
				if _, ok := ids[tx.ExternalID]; !ok {
					ids[tx.ExternalID] = got.New[n]
					n++
				}
				status[ids[tx.ExternalID]] = tx.OrderStatus
			}
			mu.Unlock()
		}
		close(done)
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		for i, w := range walkers {
			if err := w.walk("walker", 1); err != nil { // catch up after the last batch
				t.Fatal(err)
			}
			if len(w.seen) != len(ids) {
				t.Errorf("walker %d saw %d transactions, %d exist", i, len(w.seen), len(ids))
			}
			for _, id := range ids {
				if w.seen[id] != 1 {
					t.Errorf("walker %d saw %s %d times", i, id, w.seen[id])
				}
			}
		}
		for _, id := range ids {
			resp := h.do("GET", "/transactions/"+id, nil, nil)
			var full map[string]any
			if resp.status != 200 || json.Unmarshal(resp.body, &full) != nil {
				t.Fatalf("get %s: %d %s", id, resp.status, resp.body)
			}
			if full["order_status"] != status[id] {
				t.Errorf("%s: order_status %v, want %s", id, full["order_status"], status[id])
			}
		}
	})
}

func TestTransactionIngestEvents(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		ctx := context.Background()
		linkCard(t, h.api, "u1", 1)
		key := transaction.AccountKey{ClientID: h.clientID, ExternalUserID: "u1", MerchantID: 1}
		count := func(typ string) (n int, last map[string]any) {
			for _, ev := range h.events(h.clientID) {
				if ev.Type == typ {
					if n == 0 {
						_ = json.Unmarshal(ev.Payload, &last)
					}
					n++
				}
			}
			return n, last
		}
		first, err := h.transactions.IngestTransactions(ctx, key, []transaction.Transaction{order("a", "ORDERED"), order("b", "ORDERED")},
			map[string]string{"k": "v"})
		if err != nil {
			t.Fatal(err)
		}
		if len(first.New) != 2 {
			t.Fatalf("first batch: %+v", first)
		}
		if n, env := count("NEW_TRANSACTIONS_AVAILABLE"); n != 1 || !strings.Contains(fmt.Sprint(env["data"]), "k:v") {
			t.Fatalf("%d NEW_TRANSACTIONS_AVAILABLE after one batch, last %v", n, env)
		}
		again, err := h.transactions.IngestTransactions(ctx, key, []transaction.Transaction{order("a", "SHIPPED"), order("b", "ORDERED")}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(again.New) != 0 || len(again.Updated) != 1 || again.Updated[0] != first.New[0] || again.Unchanged != 1 {
			t.Fatalf("second batch: %+v", again)
		}
		n, env := count("UPDATED_TRANSACTIONS_AVAILABLE")
		if n != 1 || fmt.Sprint(env["updated"]) != fmt.Sprintf("[map[id:%s]]", first.New[0]) {
			t.Fatalf("%d UPDATED_TRANSACTIONS_AVAILABLE, last %v", n, env)
		}
		if _, err := h.transactions.IngestTransactions(ctx, key, []transaction.Transaction{order("a", "SHIPPED")}, nil); err != nil {
			t.Fatal(err)
		}
		if n, _ := count("NEW_TRANSACTIONS_AVAILABLE"); n != 1 {
			t.Errorf("an unchanged batch raised an event: %d NEW_TRANSACTIONS_AVAILABLE", n)
		}
		if n, _ := count("UPDATED_TRANSACTIONS_AVAILABLE"); n != 1 {
			t.Errorf("an unchanged batch raised an event: %d UPDATED_TRANSACTIONS_AVAILABLE", n)
		}

		bad := order("c", "LOST")
		if _, err := h.transactions.IngestTransactions(ctx, key, []transaction.Transaction{order("d", "ORDERED"), bad}, nil); err == nil ||
			!strings.Contains(err.Error(), "transactions[1].order_status") {
			t.Fatalf("invalid status: %v", err)
		}
		if p, err := h.syncOnce("u1", 1, nil, 100); err != nil || len(p.Transactions) != 2 {
			t.Fatalf("a refused batch left rows: %+v %v", p, err)
		}

		sub := transaction.Subscription{ExternalID: "s1", Name: "Premium", Status: "ACTIVE", BillingCycle: "MONTHLY",
			StartDate: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC), Price: transaction.SubscriptionPrice{Total: "9.99", Currency: "USD"}}
		subs, err := h.transactions.IngestSubscriptions(ctx, key, []transaction.Subscription{sub}, nil)
		if err != nil || len(subs.New) != 1 {
			t.Fatalf("subscriptions: %+v %v", subs, err)
		}
		if n, env := count("NEW_SUBSCRIPTIONS_AVAILABLE"); n != 1 || !strings.Contains(fmt.Sprint(env["data"]), subs.New[0]) {
			t.Fatalf("%d NEW_SUBSCRIPTIONS_AVAILABLE, last %v", n, env)
		}
		resp := h.do("GET", "/subscriptions/"+subs.New[0], nil, nil)
		if resp.status != 200 || !strings.Contains(string(resp.body), `"merchant":{"id":1,"name":"Amazon"}`) {
			t.Fatalf("get subscription: %d %s", resp.status, resp.body)
		}
	})
}

func TestTransactionSyncErrors(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		ctx := context.Background()
		linkCard(t, h.api, "u1", 1)
		linkCard(t, h.api, "u1", 2)
		key := transaction.AccountKey{ClientID: h.clientID, ExternalUserID: "u1", MerchantID: 1}
		got, err := h.transactions.IngestTransactions(ctx, key, []transaction.Transaction{order("a", "ORDERED")}, nil)
		if err != nil {
			t.Fatal(err)
		}
		p, err := h.syncOnce("u1", 1, nil, 5)
		if err != nil || p.NextCursor == nil || p.Merchant.Name != "Amazon" || p.HasMore {
			t.Fatalf("first page %+v %v", p, err)
		}
		cursor := *p.NextCursor
		if p, err := h.syncOnce("u1", 1, &cursor, 5); err != nil || p.NextCursor != nil || len(p.Transactions) != 0 {
			t.Fatalf("nothing new: %+v %v", p, err)
		}

		for _, tc := range []struct {
			name   string
			body   map[string]any
			status int
			code   string
		}{
			{"limit 0", map[string]any{"external_user_id": "u1", "merchant_id": 1, "limit": 0}, 400, "INVALID_FIELD"},
			{"limit 101", map[string]any{"external_user_id": "u1", "merchant_id": 1, "limit": 101}, 400, "INVALID_FIELD"},
			{"no merchant", map[string]any{"external_user_id": "u1"}, 400, "INVALID_FIELD"},
			{"malformed cursor", map[string]any{"external_user_id": "u1", "merchant_id": 1, "cursor": "!!"}, 400, "INVALID_CURSOR_FORMAT"},
			{"another account's cursor", map[string]any{"external_user_id": "u1", "merchant_id": 2, "cursor": cursor}, 400, "INVALID_CURSOR_FORMAT"},
			{"unknown user", map[string]any{"external_user_id": "nobody", "merchant_id": 1}, 404, "USER_NOT_FOUND"},
			{"unlinked merchant", map[string]any{"external_user_id": "u1", "merchant_id": 3}, 404, "MERCHANT_ACCOUNT_NOT_FOUND"},
		} {
			resp := h.do("POST", "/transactions/sync", tc.body, nil)
			if resp.status != tc.status || resp.errorBody(t).Code != tc.code {
				t.Errorf("%s: %d %s, want %d %s", tc.name, resp.status, resp.body, tc.status, tc.code)
			}
		}

		// Another developer with the same user sees nothing of it.
		other := h.newDeveloper("development")
		req := map[string]any{"external_user_id": "u1", "merchant_id": 1, "cursor": cursor}
		otherH := *h
		otherH.clientID, otherH.secret = other.ClientID, other.Secret
		if resp := otherH.do("POST", "/transactions/sync", req, nil); resp.status != 404 {
			t.Errorf("other developer's sync with the cursor: %d %s", resp.status, resp.body)
		}
		if resp := otherH.do("GET", "/transactions/"+got.New[0], nil, nil); resp.status != 404 || resp.errorBody(t).Code != "TRANSACTION_NOT_FOUND" {
			t.Errorf("other developer's lookup: %d %s", resp.status, resp.body)
		}
		if resp := h.do("GET", "/transactions/not-a-uuid", nil, nil); resp.status != 400 || resp.errorBody(t).Code != "INVALID_FIELD" {
			t.Errorf("bad id: %d %s", resp.status, resp.body)
		}
		if resp := h.do("GET", "/subscriptions/6ab13c5d-7e8f-4a9b-8c0d-1e2f3a4b5c6d", nil, nil); resp.status != 404 {
			t.Errorf("unknown subscription: %d %s", resp.status, resp.body)
		}
		full := h.do("GET", "/transactions/"+got.New[0], nil, nil)
		if full.status != 200 || !strings.Contains(string(full.body), `"seller":{"name":"Widgets Inc"`) ||
			!strings.Contains(string(full.body), `"loyalty_membership":{"tier":"Gold"}`) {
			t.Errorf("full shape: %d %s", full.status, full.body)
		}

		// A disconnected account still syncs; an unlinked one does not.
		if resp := h.do("POST", "/development/accounts/disconnect", map[string]any{"external_user_id": "u1", "merchant_id": 1}, nil); resp.status != 200 {
			t.Fatalf("disconnect: %d %s", resp.status, resp.body)
		}
		if p, err := h.syncOnce("u1", 1, nil, 5); err != nil || len(p.Transactions) != 1 {
			t.Errorf("disconnected account: %+v %v", p, err)
		}
		if resp := h.do("POST", "/accounts/unlink", map[string]any{"external_user_id": "u1", "merchant_id": 1}, nil); resp.status != 200 {
			t.Fatalf("unlink: %d %s", resp.status, resp.body)
		}
		if resp := h.do("POST", "/transactions/sync", map[string]any{"external_user_id": "u1", "merchant_id": 1}, nil); resp.status != 404 {
			t.Errorf("unlinked account syncs: %d %s", resp.status, resp.body)
		}
	})
}

// walkAll syncs from cursor to the end, returning every transaction seen and
// the last non-null cursor.
func (h *harness) walkAll(t *testing.T, user string, merchantID int64, cursor *string) ([]map[string]any, *string) {
	t.Helper()
	var all []map[string]any
	for {
		p, err := h.syncOnce(user, merchantID, cursor, 100)
		if err != nil {
			t.Fatal(err)
		}
		if p.NextCursor == nil {
			return all, cursor
		}
		all = append(all, p.Transactions...)
		cursor = p.NextCursor
	}
}

func devLinkTransactions(t *testing.T, h *harness, user string, merchantID int64, updated bool) {
	t.Helper()
	resp := h.do("POST", "/development/accounts/link", map[string]any{"external_user_id": user, "merchant_id": merchantID,
		"transactions": map[string]any{"new": true, "updated": updated}, "metadata": map[string]any{"run": "sim"}}, nil)
	if resp.status != 200 {
		t.Fatalf("dev link: %d %s", resp.status, resp.body)
	}
}

// The development simulator is a connector: linking with transactions
// stores the account's last two years with AUTHENTICATED and
// NEW_TRANSACTIONS_AVAILABLE, updated: true changes 3 with
// UPDATED_TRANSACTIONS_AVAILABLE, a refresh adds the two years before
// that, which the last cursor yields exactly, subscription merchants get
// their plans, and the data is the same for the same developer, user and
// merchant.
func TestDevelopmentSimulator(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		devLinkTransactions(t, h, "sim", 4, true) // Netflix: has plans
		first, cursor := h.walkAll(t, "sim", 4, nil)
		if len(first) == 0 {
			t.Fatal("no transactions after the first link")
		}
		var types []string
		var updated []string
		var subscriptionIDs []string
		evs := h.events(h.clientID)
		for i := len(evs) - 1; i >= 0; i-- { // oldest first
			types = append(types, evs[i].Type)
			var env struct {
				Data struct {
					Metadata      map[string]string     `json:"metadata"`
					Subscriptions []struct{ ID string } `json:"subscriptions"`
				} `json:"data"`
				Updated []struct{ ID string } `json:"updated"`
			}
			if err := json.Unmarshal(evs[i].Payload, &env); err != nil {
				t.Fatal(err)
			}
			if env.Data.Metadata["run"] != "sim" {
				t.Errorf("%s does not echo metadata: %s", evs[i].Type, evs[i].Payload)
			}
			for _, u := range env.Updated {
				updated = append(updated, u.ID)
			}
			for _, s := range env.Data.Subscriptions {
				subscriptionIDs = append(subscriptionIDs, s.ID)
			}
		}
		want := "[AUTHENTICATED NEW_TRANSACTIONS_AVAILABLE NEW_SUBSCRIPTIONS_AVAILABLE UPDATED_TRANSACTIONS_AVAILABLE]"
		if fmt.Sprint(types) != want {
			t.Fatalf("events %v, want %s", types, want)
		}
		if len(updated) != 3 || len(subscriptionIDs) == 0 {
			t.Fatalf("updated %v, subscriptions %v", updated, subscriptionIDs)
		}
		byID := map[string]map[string]any{}
		for _, tx := range first {
			byID[tx["id"].(string)] = tx
		}
		for _, id := range updated {
			resp := h.do("GET", "/transactions/"+id, nil, nil)
			if resp.status != 200 {
				t.Fatalf("get updated %s: %d %s", id, resp.status, resp.body)
			}
			if _, ok := byID[id]; !ok {
				t.Errorf("updated id %s is not one of the synced transactions", id)
			}
		}
		for _, id := range subscriptionIDs {
			if resp := h.do("GET", "/subscriptions/"+id, nil, nil); resp.status != 200 {
				t.Fatalf("get subscription %s: %d %s", id, resp.status, resp.body)
			}
		}

		// A refresh adds the older history; the last cursor yields exactly it.
		if resp := h.do("POST", "/transactions/refresh", map[string]any{"external_user_id": "sim", "merchant_id": 4}, nil); resp.status != 202 {
			t.Fatalf("refresh: %d %s", resp.status, resp.body)
		}
		more, _ := h.walkAll(t, "sim", 4, cursor)
		if len(more) == 0 {
			t.Fatal("no new transactions after a refresh")
		}
		for _, tx := range more {
			if _, dup := byID[tx["id"].(string)]; dup {
				t.Fatalf("refresh returned an already synced transaction %v", tx["id"])
			}
		}

		// Another user gets other data (internal/simulate tests that the
		// same developer, user, merchant and call give the same data).
		devLinkTransactions(t, h, "sim-2", 4, false)
		other, _ := h.walkAll(t, "sim-2", 4, nil)
		if len(other) == 0 || other[0]["external_id"] == first[0]["external_id"] {
			t.Errorf("a second user got %d transactions starting %v (first user %v)", len(other), other[0]["external_id"], first[0]["external_id"])
		}
		if resp := h.do("POST", "/transactions/refresh", map[string]any{"external_user_id": "nobody", "merchant_id": 4}, nil); resp.status != 404 {
			t.Errorf("refresh of an unknown user: %d %s", resp.status, resp.body)
		}
	})
}

// The development simulator's busiest test user: 10,000 transactions
// ingested by one link, synced 100 a page and refreshed a day later; -v
// prints the times.
func TestDevelopmentSimulatorTenThousand(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		// Linking stores the 10,000 in the request: 12 s alone under the
		// race detector on 2 CPUs, over the harness's 30 s beside the
		// other packages' tests.
		h.http.Timeout = 5 * time.Minute
		start := time.Now()
		devLinkTransactions(t, h, "user_10000_orders", 1, false)
		linked := time.Since(start)
		start = time.Now()
		all, _ := h.walkAll(t, "user_10000_orders", 1, nil)
		t.Logf("%s: link %v, sync of %d in pages of 100 %v", t.Name(), linked.Round(time.Millisecond), len(all),
			time.Since(start).Round(time.Millisecond))
		if len(all) != 10000 {
			t.Fatalf("%d transactions, want 10000", len(all))
		}
		// A day later, a refresh reads the 10,000 back and moves on the
		// parcels that were on their way.
		h.clock.Advance(24 * time.Hour)
		start = time.Now()
		if r := h.do("POST", "/transactions/refresh", map[string]any{"external_user_id": "user_10000_orders", "merchant_id": 1}, nil); r.status != 202 {
			t.Fatalf("refresh: %d %s", r.status, r.body)
		}
		moved := h.updatedOf("user_10000_orders")
		t.Logf("%s: refresh a day later %v, %d moved on", t.Name(), time.Since(start).Round(time.Millisecond), len(moved))
		if len(moved) == 0 {
			t.Error("a day later, no order on its way moved on")
		}
	})
}
