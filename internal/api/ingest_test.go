package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hitchdev/hitch/internal/connector"
	"github.com/hitchdev/hitch/internal/transaction"
)

// newConnector makes connector credentials, as `hitch connectors create`
// does.
func (h *harness) newConnector(t *testing.T) *connector.Credentials {
	t.Helper()
	creds, err := h.connectors.Create(context.Background(), "Test connector")
	if err != nil {
		t.Fatal(err)
	}
	// It serves every catalog merchant, as a connector declares.
	var ids []int64
	for _, m := range h.catalog.All() {
		ids = append(ids, m.ID)
	}
	if r := h.do("PUT", "/internal/connector", map[string]any{"merchant_ids": ids},
		http.Header{"Authorization": {basic(creds.ID, creds.Secret)}}); r.status != http.StatusOK {
		t.Fatalf("declare: %d %s", r.status, r.body)
	}
	return creds
}

// ingest posts a batch to /internal/ingest/{kind} with the connector's
// credentials.
func (h *harness) ingest(c *connector.Credentials, kind string, body any) *response {
	h.t.Helper()
	return h.do("POST", "/internal/ingest/"+kind, body, http.Header{"Authorization": {basic(c.ID, c.Secret)}})
}

// wireItem renders a transaction or subscription as a connector sends it:
// the read shape without the fields Hitch assigns.
func wireItem(t *testing.T, v any) map[string]any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	delete(m, "id")
	delete(m, "merchant")
	return m
}

func transactionsBody(t *testing.T, clientID, user string, merchantID int64, txs ...transaction.Transaction) map[string]any {
	t.Helper()
	items := make([]any, len(txs))
	for i, tx := range txs {
		items[i] = wireItem(t, tx)
	}
	return map[string]any{"client_id": clientID, "external_user_id": user, "merchant_id": merchantID, "transactions": items}
}

func plan(externalID, status string) transaction.Subscription {
	return transaction.Subscription{ExternalID: externalID, Name: "Premium", Description: "Four screens", Status: status,
		BillingCycle: "MONTHLY", StartDate: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC),
		NextBillingDate: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), LastBillingDate: time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC),
		NextRenewalDate: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), IsPaid: true, IsCancellable: true,
		Price: transaction.SubscriptionPrice{Total: "22.99", Currency: "USD"}}
}

func decodeIngested(t *testing.T, resp *response) transaction.Ingested {
	t.Helper()
	var got transaction.Ingested
	if resp.status != 200 || json.Unmarshal(resp.body, &got) != nil {
		t.Fatalf("ingest: %d %s", resp.status, resp.body)
	}
	return got
}

// A connector's batch is read back by the developer through sync and
// lookup; the same batch again changes nothing, a changed item keeps its id
// and raises UPDATED_TRANSACTIONS_AVAILABLE.
func TestIngestTransactionsThroughConnector(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		conn := h.newConnector(t)
		linkCard(t, h.api, "u1", 1)
		body := transactionsBody(t, h.clientID, "u1", 1, order("o-1", "ORDERED"), order("o-2", "SHIPPED"))
		body["metadata"] = map[string]string{"source": "backfill"}
		first := decodeIngested(t, h.ingest(conn, "transactions", body))
		if len(first.New) != 2 || len(first.Updated) != 0 || first.Unchanged != 0 {
			t.Fatalf("first batch: %+v", first)
		}

		p, err := h.syncOnce("u1", 1, nil, 100)
		if err != nil || len(p.Transactions) != 2 {
			t.Fatalf("sync: %+v %v", p, err)
		}
		for i, want := range []string{"o-1", "o-2"} {
			if p.Transactions[i]["external_id"] != want || p.Transactions[i]["id"] != first.New[i] {
				t.Errorf("sync[%d] = %v, want %s as %s", i, p.Transactions[i], want, first.New[i])
			}
		}
		resp := h.do("GET", "/transactions/"+first.New[1], nil, nil)
		if resp.status != 200 || !strings.Contains(string(resp.body), `"order_status":"SHIPPED"`) ||
			!strings.Contains(string(resp.body), `"total":"10.80"`) {
			t.Fatalf("lookup: %d %s", resp.status, resp.body)
		}

		// Idempotency: the same data is a no-op, events included.
		again := decodeIngested(t, h.ingest(conn, "transactions", body))
		if len(again.New) != 0 || len(again.Updated) != 0 || again.Unchanged != 2 {
			t.Fatalf("same batch again: %+v", again)
		}
		changed := decodeIngested(t, h.ingest(conn, "transactions",
			transactionsBody(t, h.clientID, "u1", 1, order("o-1", "DELIVERED"), order("o-2", "SHIPPED"))))
		if len(changed.New) != 0 || len(changed.Updated) != 1 || changed.Updated[0] != first.New[0] || changed.Unchanged != 1 {
			t.Fatalf("changed batch: %+v", changed)
		}
		if p, err := h.syncOnce("u1", 1, nil, 100); err != nil || len(p.Transactions) != 2 || p.Transactions[0]["order_status"] != "DELIVERED" {
			t.Fatalf("sync after the change: %+v %v", p, err)
		}

		counts := map[string]int{}
		for _, ev := range h.events(h.clientID) {
			counts[ev.Type]++
			if ev.Type == "NEW_TRANSACTIONS_AVAILABLE" && !strings.Contains(string(ev.Payload), `"source":"backfill"`) {
				t.Errorf("metadata not echoed: %s", ev.Payload)
			}
		}
		if counts["NEW_TRANSACTIONS_AVAILABLE"] != 1 || counts["UPDATED_TRANSACTIONS_AVAILABLE"] != 1 {
			t.Errorf("events %v, want one NEW_ and one UPDATED_TRANSACTIONS_AVAILABLE", counts)
		}
	})
}

func TestIngestSubscriptionsThroughConnector(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		conn := h.newConnector(t)
		linkCard(t, h.api, "u1", 4)
		item := wireItem(t, plan("plan-1", "ACTIVE"))
		item["expiration_date"] = nil
		body := map[string]any{"client_id": h.clientID, "external_user_id": "u1", "merchant_id": 4, "subscriptions": []any{item}}
		first := decodeIngested(t, h.ingest(conn, "subscriptions", body))
		if len(first.New) != 1 {
			t.Fatalf("first batch: %+v", first)
		}
		resp := h.do("GET", "/subscriptions/"+first.New[0], nil, nil)
		if resp.status != 200 || !strings.Contains(string(resp.body), `"merchant":{"id":4,"name":"Netflix"}`) ||
			!strings.Contains(string(resp.body), `"start_date":"2025-01-01T00:00:00Z"`) {
			t.Fatalf("lookup: %d %s", resp.status, resp.body)
		}
		if again := decodeIngested(t, h.ingest(conn, "subscriptions", body)); again.Unchanged != 1 || len(again.New)+len(again.Updated) != 0 {
			t.Fatalf("same batch again: %+v", again)
		}
		item["status"] = "ACTIVE_CANCELLATION"
		if changed := decodeIngested(t, h.ingest(conn, "subscriptions", body)); len(changed.Updated) != 1 || changed.Updated[0] != first.New[0] {
			t.Fatalf("changed batch: %+v", changed)
		}
		counts := map[string]int{}
		for _, ev := range h.events(h.clientID) {
			counts[ev.Type]++
		}
		if counts["NEW_SUBSCRIPTIONS_AVAILABLE"] != 1 || counts["UPDATED_SUBSCRIPTIONS_AVAILABLE"] != 1 {
			t.Errorf("events %v", counts)
		}
	})
}

// Connector and developer credentials never stand in for each other.
func TestIngestAuthentication(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		conn := h.newConnector(t)
		linkCard(t, h.api, "u1", 1)
		body := transactionsBody(t, h.clientID, "u1", 1, order("o-1", "ORDERED"))
		asConnector := http.Header{"Authorization": {basic(conn.ID, conn.Secret)}}
		for name, header := range map[string]http.Header{
			"developer credentials": nil, // h.do's default
			"no credentials":        {"Authorization": {""}},
			"wrong secret":          {"Authorization": {basic(conn.ID, conn.Secret+"x")}},
			"secret as the id":      {"Authorization": {basic(conn.Secret, conn.ID)}},
		} {
			for _, kind := range []string{"transactions", "subscriptions"} {
				resp := h.do("POST", "/internal/ingest/"+kind, body, header)
				if resp.status != 401 || resp.errorBody(t).Code != "INVALID_API_KEYS" || !strings.HasPrefix(resp.header.Get("WWW-Authenticate"), "Basic") {
					t.Errorf("%s on %s: %d %s", name, kind, resp.status, resp.body)
				}
			}
		}
		for _, route := range []struct{ method, path string }{{"GET", "/jwe/key"}, {"POST", "/transactions/sync"},
			{"GET", "/webhooks/endpoints"}, {"POST", "/development/accounts/link"}} {
			var reqBody any
			if route.method == "POST" {
				reqBody = map[string]any{"external_user_id": "u1", "merchant_id": 1}
			}
			if resp := h.do(route.method, route.path, reqBody, asConnector); resp.status != 401 {
				t.Errorf("connector credentials on %s %s: %d %s", route.method, route.path, resp.status, resp.body)
			}
		}
		if p, err := h.syncOnce("u1", 1, nil, 10); err != nil || len(p.Transactions) != 0 {
			t.Fatalf("a refused request left transactions: %+v %v", p, err)
		}

		if resp := h.ingest(conn, "transactions", body); resp.status != 200 {
			t.Fatalf("valid connector: %d %s", resp.status, resp.body)
		}
		if err := h.connectors.Revoke(context.Background(), conn.ID); err != nil {
			t.Fatal(err)
		}
		if resp := h.ingest(conn, "transactions", body); resp.status != 401 {
			t.Fatalf("revoked connector: %d %s", resp.status, resp.body)
		}
		if resp := h.ingest(h.newConnector(t), "transactions", body); resp.status != 200 {
			t.Fatalf("another connector after a revocation: %d %s", resp.status, resp.body)
		}
		for _, canary := range []string{conn.Secret, basic(conn.ID, conn.Secret), "u1"} {
			if strings.Contains(h.logs.String(), canary) {
				t.Errorf("logs contain %q", canary)
			}
		}
	})
}

func TestIngestErrors(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		conn := h.newConnector(t)
		linkCard(t, h.api, "u1", 1)
		other := h.newDeveloper("production")
		valid := func() map[string]any {
			return transactionsBody(t, h.clientID, "u1", 1, order("o-1", "ORDERED"), order("o-2", "ORDERED"))
		}
		item := func(body map[string]any, i int) map[string]any {
			return body["transactions"].([]any)[i].(map[string]any)
		}
		tooMany := make([]transaction.Transaction, transaction.MaxBatch+1)
		for i := range tooMany {
			tooMany[i] = order(fmt.Sprintf("o-%d", i), "ORDERED")
		}
		cases := []struct {
			name   string
			body   func() any
			status int
			code   string
			names  string // in the message
		}{
			{"unknown client", func() any { b := valid(); b["client_id"] = "no-such-client"; return b }, 404, "NOT_FOUND", "client_id"},
			{"client of the other environment", func() any { b := valid(); b["client_id"] = other.ClientID; return b }, 404, "NOT_FOUND", "client_id"},
			{"unknown user", func() any { b := valid(); b["external_user_id"] = "nobody"; return b }, 404, "USER_NOT_FOUND", ""},
			{"no linked account at the merchant", func() any { b := valid(); b["merchant_id"] = 4; return b }, 404, "MERCHANT_ACCOUNT_NOT_FOUND", ""},
			{"missing client_id", func() any { b := valid(); delete(b, "client_id"); return b }, 400, "INVALID_FIELD", "client_id"},
			{"missing external_user_id", func() any { b := valid(); delete(b, "external_user_id"); return b }, 400, "INVALID_FIELD", "external_user_id"},
			{"missing merchant_id", func() any { b := valid(); delete(b, "merchant_id"); return b }, 400, "INVALID_FIELD", "merchant_id"},
			{"missing transactions", func() any { b := valid(); delete(b, "transactions"); return b }, 400, "INVALID_FIELD", "transactions"},
			{"empty batch", func() any { b := valid(); b["transactions"] = []any{}; return b }, 400, "INVALID_FIELD", "1 to 1000"},
			{"batch over the limit", func() any { return transactionsBody(t, h.clientID, "u1", 1, tooMany...) }, 400, "INVALID_FIELD", "1 to 1000"},
			{"unknown top-level field", func() any { b := valid(); b["cursor"] = "x"; return b }, 400, "INVALID_FIELD", "cursor"},
			{"item with an id", func() any { b := valid(); item(b, 1)["id"] = "x"; return b }, 400, "INVALID_FIELD", "transactions[1].id"},
			{"unknown item field", func() any { b := valid(); item(b, 0)["colour"] = "red"; return b }, 400, "INVALID_FIELD", "transactions[0].colour"},
			{"money as a number", func() any { b := valid(); item(b, 1)["price"].(map[string]any)["total"] = 10.8; return b },
				400, "INVALID_FIELD", "transactions[1].price.total"},
			{"money with three places", func() any { b := valid(); item(b, 1)["price"].(map[string]any)["total"] = "10.801"; return b },
				400, "INVALID_FIELD", "transactions[1].price.total"},
			{"unknown order status", func() any { b := valid(); item(b, 1)["order_status"] = "LOST"; return b }, 400, "INVALID_FIELD", "transactions[1].order_status"},
			{"missing external_id", func() any { b := valid(); delete(item(b, 0), "external_id"); return b }, 400, "INVALID_FIELD", "transactions[0].external_id"},
			{"external_id twice", func() any { b := valid(); item(b, 1)["external_id"] = "o-1"; return b }, 400, "INVALID_FIELD", "transactions[1].external_id"},
			{"external_id with NUL", func() any { b := valid(); item(b, 0)["external_id"] = "o\x00"; return b }, 400, "INVALID_FIELD", "transactions[0].external_id"},
			{"missing datetime", func() any { b := valid(); delete(item(b, 0), "datetime"); return b }, 400, "INVALID_FIELD", "transactions[0].datetime"},
			{"malformed datetime", func() any { b := valid(); item(b, 0)["datetime"] = "yesterday"; return b }, 400, "INVALID_FIELD", "transactions[0].datetime"},
			{"item not an object", func() any { b := valid(); b["transactions"].([]any)[1] = "o-2"; return b }, 400, "INVALID_FIELD", "transactions[1]"},
			{"null item", func() any { b := valid(); b["transactions"].([]any)[0] = nil; return b }, 400, "INVALID_FIELD", "transactions[0]"},
			{"too much metadata", func() any {
				b := valid()
				md := map[string]string{}
				for i := range 11 {
					md[fmt.Sprint(i)] = "v"
				}
				b["metadata"] = md
				return b
			}, 400, "INVALID_FIELD", "metadata"},
			{"duplicate key", func() any {
				return fmt.Sprintf(`{"client_id": %q, "client_id": %q, "external_user_id": "u1", "merchant_id": 1, "transactions": []}`, h.clientID, h.clientID)
			}, 400, "INVALID_FIELD", "client_id"},
		}
		for _, tc := range cases {
			resp := h.ingest(conn, "transactions", tc.body())
			if resp.status != tc.status {
				t.Errorf("%s: %d %s, want %d", tc.name, resp.status, resp.body, tc.status)
				continue
			}
			if e := resp.errorBody(t); e.Code != tc.code || !strings.Contains(e.Message, tc.names) {
				t.Errorf("%s: %s %q, want %s naming %q", tc.name, e.Code, e.Message, tc.code, tc.names)
			}
		}
		if p, err := h.syncOnce("u1", 1, nil, 100); err != nil || len(p.Transactions) != 0 {
			t.Fatalf("refused batches left transactions: %+v %v", p, err)
		}

		subs := func(mutate func(map[string]any)) any {
			it := wireItem(t, plan("plan-1", "ACTIVE"))
			mutate(it)
			return map[string]any{"client_id": h.clientID, "external_user_id": "u1", "merchant_id": 1, "subscriptions": []any{it}}
		}
		for name, tc := range map[string]struct {
			body  any
			names string
		}{
			"merchant is the account's": {subs(func(m map[string]any) { m["merchant"] = map[string]any{"id": 2, "name": "x"} }), "subscriptions[0].merchant"},
			"unknown billing cycle":     {subs(func(m map[string]any) { m["billing_cycle"] = "HOURLY" }), "subscriptions[0].billing_cycle"},
			"malformed expiration":      {subs(func(m map[string]any) { m["expiration_date"] = "soon" }), "subscriptions[0].expiration_date"},
			"missing start_date":        {subs(func(m map[string]any) { delete(m, "start_date") }), "subscriptions[0].start_date"},
		} {
			resp := h.ingest(conn, "subscriptions", tc.body)
			if resp.status != 400 || !strings.Contains(resp.errorBody(t).Message, tc.names) {
				t.Errorf("%s: %d %s, want 400 naming %s", name, resp.status, resp.body, tc.names)
			}
		}

		// Once unlinked, the account takes no more batches.
		if resp := h.do("POST", "/accounts/unlink", map[string]any{"external_user_id": "u1", "merchant_id": 1}, nil); resp.status != 200 {
			t.Fatalf("unlink: %d %s", resp.status, resp.body)
		}
		resp := h.ingest(conn, "transactions", valid())
		if resp.status != 404 || resp.errorBody(t).Code != "MERCHANT_ACCOUNT_NOT_FOUND" {
			t.Fatalf("unlinked account: %d %s", resp.status, resp.body)
		}
	})
}

// A full batch of a thousand large transactions is over the 1 MiB of other
// requests and is taken; a body over 8 MiB is not.
func TestIngestBatchLimits(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		conn := h.newConnector(t)
		linkCard(t, h.api, "u1", 1)
		batch := make([]transaction.Transaction, transaction.MaxBatch)
		for i := range batch {
			batch[i] = order(fmt.Sprintf("o-%04d", i), "ORDERED")
			batch[i].Products[0].Description = strings.Repeat("d", 1500)
		}
		body := transactionsBody(t, h.clientID, "u1", 1, batch...)
		if size, _ := json.Marshal(body); len(size) < 2<<20 {
			t.Fatalf("the batch is only %d bytes", len(size))
		}
		if got := decodeIngested(t, h.ingest(conn, "transactions", body)); len(got.New) != transaction.MaxBatch {
			t.Fatalf("%d new of %d", len(got.New), transaction.MaxBatch)
		}
		huge := `{"client_id": "` + strings.Repeat("x", 9<<20) + `"}`
		resp := h.ingest(conn, "transactions", huge)
		if resp.status != 413 || resp.errorBody(t).Code != "REQUEST_TOO_LARGE" {
			t.Fatalf("9 MiB body: %d %.200s", resp.status, resp.body)
		}
	})
}

// What a connector ingests for one developer never shows to another, even
// for the same external_user_id at the same merchant.
func TestIngestTenantIsolation(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		conn := h.newConnector(t)
		b := h.newDeveloper("development")
		bAuth := http.Header{"Authorization": {basic(b.ClientID, b.Secret)}}
		linkCard(t, h.api, "shared", 1)
		linkCard(t, h.clientFor(b), "shared", 1)
		got := decodeIngested(t, h.ingest(conn, "transactions", transactionsBody(t, h.clientID, "shared", 1, order("o-1", "ORDERED"))))
		subs := decodeIngested(t, h.ingest(conn, "subscriptions", map[string]any{"client_id": h.clientID, "external_user_id": "shared",
			"merchant_id": 1, "subscriptions": []any{wireItem(t, plan("plan-1", "ACTIVE"))}}))

		resp := h.do("POST", "/transactions/sync", map[string]any{"external_user_id": "shared", "merchant_id": 1}, bAuth)
		var page syncPage
		if resp.status != 200 || json.Unmarshal(resp.body, &page) != nil || len(page.Transactions) != 0 {
			t.Fatalf("B's sync: %d %s", resp.status, resp.body)
		}
		if resp := h.do("GET", "/transactions/"+got.New[0], nil, bAuth); resp.status != 404 {
			t.Fatalf("B reads A's transaction: %d %s", resp.status, resp.body)
		}
		if resp := h.do("GET", "/subscriptions/"+subs.New[0], nil, bAuth); resp.status != 404 {
			t.Fatalf("B reads A's subscription: %d %s", resp.status, resp.body)
		}
		for _, ev := range h.events(b.ClientID) {
			if strings.Contains(ev.Type, "TRANSACTIONS") || strings.Contains(ev.Type, "SUBSCRIPTIONS") {
				t.Errorf("B got %s", ev.Type)
			}
		}
		// The same external ids ingested for B are B's own, with other ids.
		gotB := decodeIngested(t, h.ingest(conn, "transactions", transactionsBody(t, b.ClientID, "shared", 1, order("o-1", "ORDERED"))))
		if len(gotB.New) != 1 || gotB.New[0] == got.New[0] {
			t.Fatalf("B's batch: %+v (A's id %s)", gotB, got.New[0])
		}
		if p, err := h.syncOnce("shared", 1, nil, 10); err != nil || len(p.Transactions) != 1 || p.Transactions[0]["id"] != got.New[0] {
			t.Fatalf("A's sync after B's batch: %+v %v", p, err)
		}
	})
}

// The ingestion API is routed in production too, with the same credentials
// rules.
func TestIngestInProduction(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		conn := h.newConnector(t)
		dev := h.newDeveloper("development")
		body := transactionsBody(t, h.clientID, "nobody", 1, order("o-1", "ORDERED"))
		resp := h.ingest(conn, "transactions", body)
		if resp.status != 404 || resp.errorBody(t).Code != "USER_NOT_FOUND" {
			t.Fatalf("production ingest for an unknown user: %d %s", resp.status, resp.body)
		}
		body["client_id"] = dev.ClientID
		if resp := h.ingest(conn, "transactions", body); resp.status != 404 || resp.errorBody(t).Code != "NOT_FOUND" {
			t.Fatalf("a development client in production: %d %s", resp.status, resp.body)
		}
		if resp := h.do("POST", "/internal/ingest/transactions", body, nil); resp.status != 401 {
			t.Fatalf("developer credentials in production: %d", resp.status)
		}
	}, production)
}
