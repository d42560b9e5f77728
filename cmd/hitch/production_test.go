package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hitchdev/hitch/client"
	"github.com/hitchdev/hitch/examples/refshop"
)

// refshopID is the reference shop's catalog merchant id.
const refshopID = 114

// The reference shop's demo users (examples/refshop).
const (
	shopPassword = "correct-horse-battery"
	shopAda      = "ada@refshop.example"
	shopOTP      = "otp@refshop.example"
	shopQuiz     = "quiz@refshop.example"
)

// prodStack is a production deployment on one machine, each part a process
// of its own: the reference shop, hitch serve --env production, and
// reference connectors; with a developer, a webhook receiver and the
// developer's page that opens the web SDK.
type prodStack struct {
	base, shop, admin string
	env               []string
	api               *hitchAPI
	client            *client.Client
	hitch             *hitchProcess
	shopProc          *hitchProcess
	conns             []*hitchProcess
	connEnv           []string
	sink              *eventSink
	pageURL           string
	screenshots       string
	dataDir           string
}

// startProduction starts the stack on the store db configures, with
// connectors reference connector processes.
func startProduction(t *testing.T, db []string, connectors int, extraEnv ...string) *prodStack {
	t.Helper()
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	st := &prodStack{admin: hex.EncodeToString(key[:8]), screenshots: t.TempDir()}
	st.env = append(append([]string{
		"HITCH_ADDR=127.0.0.1:0",
		"HITCH_ENV=production",
		"HITCH_MASTER_KEY=" + hex.EncodeToString(key),
		"HITCH_LOG_FORMAT=json",
		"HITCH_LOG_LEVEL=debug",
		"HITCH_REFRESH_INTERVAL=3s",
		"HITCH_WEBHOOK_ALLOW_PRIVATE=true",
		"HITCH_WEBHOOK_RETRY_SCHEDULE=0s,200ms,500ms,1s",
	}, db...), extraEnv...)
	for _, kv := range db {
		if v, ok := strings.CutPrefix(kv, "HITCH_DATA_DIR="); ok {
			st.dataDir = v
		}
	}
	code, out, stderr := cli(t, st.env, "clients", "create", "--name", "Production test", "--env", "production", "--json")
	var dev struct {
		ClientID string `json:"client_id"`
		Secret   string `json:"secret"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &dev) != nil {
		t.Fatalf("clients create: %d %s %s", code, out, stderr)
	}
	code, out, stderr = cli(t, st.env, "connectors", "create", "--name", "Reference shop", "--json")
	var conn struct {
		ID     string `json:"id"`
		Secret string `json:"secret"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &conn) != nil {
		t.Fatalf("connectors create: %d %s %s", code, out, stderr)
	}
	st.shopProc = startProcess(t, []string{"HITCH_LOG_FORMAT=json"}, regexp.MustCompile(`"msg":"refshop listening".*?"addr":"([^"]+)"`),
		"refshop", "--addr", "127.0.0.1:0", "--admin-token", st.admin)
	st.shop = "http://" + st.shopProc.base
	st.hitch = startHitch(t, st.env)
	st.base = st.hitch.base
	st.api = &hitchAPI{http: validatedClient(t, &http.Transport{}), clientID: dev.ClientID, secret: dev.Secret}
	st.client = client.New(st.base, dev.ClientID, dev.Secret, client.WithHTTPClient(st.api.http))

	st.sink = &eventSink{}
	hooks := httptest.NewServer(st.sink)
	t.Cleanup(hooks.Close)
	st.sink.setSecret(st.api.createEndpoint(t, st.base, hooks.URL))

	// The developer's page, on https (production frames the flow only in
	// allowed https origins), opening the web SDK for ?session=.
	page := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>An app</title>
<script src="%s/sdk/hitch.js"></script></head><body>
<button id="open" type="button">Link an account</button>
<script>
document.getElementById('open').addEventListener('click', function () {
  new HitchLink().open({
    sessionId: new URLSearchParams(location.search).get('session'),
    clientId: %q, environment: 'production',
    onSuccess: function () {}, onError: function () {}, onEvent: function () {}, onExit: function () {}
  });
});
</script></body></html>`, html.EscapeString(st.base), dev.ClientID)
	}))
	t.Cleanup(page.Close)
	st.pageURL = page.URL + "/"
	if _, err := st.client.SetLinkAllowedOrigins(context.Background(), []string{page.URL}); err != nil {
		t.Fatal(err)
	}

	// Debug logs: JSON from hitch, text from the connectors, both searched
	// for canaries.
	st.connEnv = []string{"CONNECTOR_ID=" + conn.ID, "CONNECTOR_SECRET=" + conn.Secret, "HITCH_LOG_FORMAT=text", "HITCH_LOG_LEVEL=debug"}
	for range connectors {
		st.startConnector(t)
	}
	return st
}

// startConnector starts one more reference connector process.
func (st *prodStack) startConnector(t *testing.T) *hitchProcess {
	t.Helper()
	p := startProcess(t, st.connEnv, regexp.MustCompile(`connector declared.*?merchant_ids"?[:=]\[(\d+)\]`),
		"refconnector", "--hitch-url", st.base, "--site", st.shop, "--screenshots", st.screenshots,
		// CI runs this beside every other package on 2 CPUs.
		"--step-timeout", "90s")
	st.conns = append(st.conns, p)
	return p
}

// startProcess runs the hitch binary with args and env (and this process's
// environment less HITCH_*), until the test ends, and waits for a log line
// matching re, whose first group it keeps as the process's base.
func startProcess(t *testing.T, env []string, re *regexp.Regexp, args ...string) *hitchProcess {
	t.Helper()
	cmd := exec.Command(hitchBinary(t), args...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "HITCH_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, env...)
	p := &hitchProcess{cmd: cmd, logs: &lockedBuffer{}, exited: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.logs, p.logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		_ = cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		p.kill()
		if !t.Failed() {
			return
		}
		t.Logf("hitch %s logged:\n%s", args[0], lastLines(p.logs.String(), 40))
		if dir := os.Getenv("HITCH_TEST_ARTIFACTS"); dir != "" {
			name := filepath.Join(dir, fmt.Sprintf("%s-%s-%d.log", strings.ReplaceAll(t.Name(), "/", "-"), args[0], cmd.Process.Pid))
			_ = os.WriteFile(name, []byte(p.logs.String()), 0o600)
		}
	})
	p.base = waitFor(t, p.logs, re)
	return p
}

// flowResult is production.mjs's result of one login.
type flowResult struct {
	Status  string `json:"status"`
	Message string `json:"message"`
	MS      int64  `json:"ms"`
}

// loginFlow is one login of production.mjs.
type loginFlow struct {
	Session  string `json:"session"`
	Username string `json:"username"`
	Password string `json:"password"`
	OTP      bool   `json:"otp,omitempty"`
	Answer   string `json:"answer,omitempty"`
}

// link runs the flows in Chromium, one after the other.
func (st *prodStack) link(t *testing.T, node, scripts string, flows ...loginFlow) []flowResult {
	t.Helper()
	b, _ := json.Marshal(flows)
	out := runBrowserScript(t, node, scripts, "production.mjs", 4*time.Minute, st.hitch.logs,
		"PAGE_URL="+st.pageURL, "SHOP_URL="+st.shop, "FLOWS="+string(b), "OUT_DIR="+st.screenshots, "CHROMIUM="+chromiumPath)
	var res []flowResult
	if err := json.Unmarshal(bytes.TrimSpace(out.Bytes()), &res); err != nil || len(res) != len(flows) {
		t.Fatalf("production.mjs printed %q: %v", out.String(), err)
	}
	return res
}

// session creates an SDK session and returns its value.
func (st *prodStack) session(t *testing.T, typ, user string, extra map[string]any) string {
	t.Helper()
	body := map[string]any{"type": typ, "external_user_id": user}
	for k, v := range extra {
		body[k] = v
	}
	var s struct {
		Session string `json:"session"`
	}
	if _, err := st.api.call(st.base, "POST", "/session/create", body, &s); err != nil {
		t.Fatal(err)
	}
	return s.Session
}

// shopAdmin calls the reference shop's admin API.
func (st *prodStack) shopAdmin(t *testing.T, method, path string, body, out any) {
	t.Helper()
	var reader io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		reader = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, st.shop+"/admin/api"+path, reader)
	req.Header.Set("Authorization", "Bearer "+st.admin)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 {
		t.Fatalf("shop admin %s %s: %d %s", method, path, resp.StatusCode, data)
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			t.Fatal(err)
		}
	}
}

func (st *prodStack) shopUser(t *testing.T, email string) *refshop.User {
	t.Helper()
	var u refshop.User
	st.shopAdmin(t, "GET", "/users/"+email, nil, &u)
	return &u
}

// syncAll reads every transaction of the account through
// POST /transactions/sync and GET /transactions/{id}.
func (st *prodStack) syncAll(t *testing.T, user string) []syncedTransaction {
	t.Helper()
	var all []syncedTransaction
	var cursor *string
	for {
		var page struct {
			Transactions []syncedTransaction `json:"transactions"`
			NextCursor   *string             `json:"next_cursor"`
			HasMore      bool                `json:"has_more"`
		}
		body := map[string]any{"external_user_id": user, "merchant_id": refshopID, "limit": 100}
		if cursor != nil {
			body["cursor"] = *cursor
		}
		if _, err := st.api.call(st.base, "POST", "/transactions/sync", body, &page); err != nil {
			t.Fatal(err)
		}
		// The sync shape leaves out shipping, the loyalty membership and
		// sellers: read each transaction whole.
		for _, tx := range page.Transactions {
			var full syncedTransaction
			if _, err := st.api.call(st.base, "GET", "/transactions/"+tx.ID, nil, &full); err != nil {
				t.Fatal(err)
			}
			all = append(all, full)
		}
		if page.NextCursor == nil || !page.HasMore {
			return all
		}
		cursor = page.NextCursor
	}
}

// syncedTransaction is a transaction as Hitch serves it.
type syncedTransaction struct {
	ID          string    `json:"id"`
	ExternalID  string    `json:"external_id"`
	Datetime    time.Time `json:"datetime"`
	URL         string    `json:"url"`
	OrderStatus string    `json:"order_status"`
	Price       struct {
		SubTotal    string `json:"sub_total"`
		Total       string `json:"total"`
		Currency    string `json:"currency"`
		Adjustments []struct {
			Type   string `json:"type"`
			Label  string `json:"label"`
			Amount string `json:"amount"`
		} `json:"adjustments"`
	} `json:"price"`
	PaymentMethods []struct {
		Type              string `json:"type"`
		Brand             string `json:"brand"`
		LastFour          string `json:"last_four"`
		TransactionAmount string `json:"transaction_amount"`
	} `json:"payment_methods"`
	Products []struct {
		ExternalID string `json:"external_id"`
		Name       string `json:"name"`
		Quantity   int    `json:"quantity"`
		Price      struct {
			SubTotal  string `json:"sub_total"`
			Total     string `json:"total"`
			UnitPrice string `json:"unit_price"`
		} `json:"price"`
		Seller *struct {
			Name string `json:"name"`
		} `json:"seller"`
	} `json:"products"`
	Shipping *struct {
		Location struct {
			FirstName string `json:"first_name"`
			LastName  string `json:"last_name"`
			Address   struct {
				Line1      string `json:"line1"`
				City       string `json:"city"`
				PostalCode string `json:"postal_code"`
				Country    string `json:"country"`
			} `json:"address"`
		} `json:"location"`
	} `json:"shipping"`
	LoyaltyMembership *struct {
		Tier string `json:"tier"`
	} `json:"loyalty_membership"`
}

// cents renders cents as the API's decimal string.
func cents(c int64) string {
	sign := ""
	if c < 0 {
		sign, c = "-", -c
	}
	return fmt.Sprintf("%s%d.%02d", sign, c/100, c%100)
}

var shopStatus = map[string]string{"Ordered": "ORDERED", "Shipped": "SHIPPED", "Delivered": "DELIVERED",
	"Cancelled": "CANCELLED", "Returned": "RETURNED", "Refunded": "REFUNDED", "Payment failed": "FAILED"}

var shopAdjustment = map[string]string{refshop.AdjustTax: "TAX", refshop.AdjustDiscount: "DISCOUNT",
	refshop.AdjustShipping: "FEE", refshop.AdjustRefund: "REFUND"}

// compareOrders checks that Hitch serves exactly the shop's orders, field
// by field.
func compareOrders(t *testing.T, shop *refshop.User, got []syncedTransaction) {
	t.Helper()
	if len(got) != len(shop.Orders) {
		t.Fatalf("Hitch has %d transactions, the shop %d orders", len(got), len(shop.Orders))
	}
	byID := map[string]syncedTransaction{}
	for _, tx := range got {
		byID[tx.ExternalID] = tx
	}
	for _, o := range shop.Orders {
		tx, ok := byID[o.Number]
		if !ok {
			t.Fatalf("order %s is not in Hitch", o.Number)
		}
		check := func(what string, got, want any) {
			t.Helper()
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("order %s %s: Hitch has %v, the shop %v", o.Number, what, got, want)
			}
		}
		check("datetime", tx.Datetime.UTC().Format(time.RFC3339), o.PlacedAt.UTC().Format(time.RFC3339))
		check("status", tx.OrderStatus, shopStatus[o.Status])
		check("sub_total", tx.Price.SubTotal, cents(o.SubtotalCents))
		check("total", tx.Price.Total, cents(o.TotalCents))
		check("currency", tx.Price.Currency, "USD")
		check("url suffix", strings.HasSuffix(tx.URL, "/orders/"+o.Number), true)
		check("adjustments", len(tx.Price.Adjustments), len(o.Adjustments))
		for i, a := range o.Adjustments[:min(len(o.Adjustments), len(tx.Price.Adjustments))] {
			got := tx.Price.Adjustments[i]
			check(fmt.Sprintf("adjustment %d", i), got.Type+" "+got.Label+" "+got.Amount, shopAdjustment[a.Kind]+" "+a.Label+" "+cents(a.AmountCents))
		}
		check("payments", len(tx.PaymentMethods), len(o.Payments))
		for i, p := range o.Payments[:min(len(o.Payments), len(tx.PaymentMethods))] {
			got := tx.PaymentMethods[i]
			typ := "CARD"
			if p.Method == refshop.MethodGiftCard {
				typ = "GIFT_CARD"
			}
			check(fmt.Sprintf("payment %d", i), got.Type+" "+got.LastFour+" "+got.TransactionAmount, typ+" "+p.Last4+" "+cents(p.AmountCents))
			if p.Method == refshop.MethodCard {
				check(fmt.Sprintf("payment %d brand", i), got.Brand, strings.ToUpper(p.Brand))
			}
		}
		check("products", len(tx.Products), len(o.Items))
		for i, it := range o.Items[:min(len(o.Items), len(tx.Products))] {
			got := tx.Products[i]
			seller := ""
			if got.Seller != nil {
				seller = got.Seller.Name
			}
			check(fmt.Sprintf("product %d", i), fmt.Sprint(got.ExternalID, got.Name, got.Quantity, got.Price.UnitPrice, got.Price.Total, seller),
				fmt.Sprint(it.SKU, it.Name, it.Quantity, cents(it.UnitPriceCents), cents(it.LineTotalCents), it.Seller))
		}
		if tx.Shipping == nil {
			t.Errorf("order %s has no shipping in Hitch", o.Number)
		} else {
			loc := tx.Shipping.Location
			check("shipping", loc.FirstName+" "+loc.LastName+", "+loc.Address.Line1+", "+loc.Address.City+" "+loc.Address.PostalCode+" "+loc.Address.Country,
				o.ShippingAddress.FirstName+" "+o.ShippingAddress.LastName+", "+o.ShippingAddress.Line1+", "+o.ShippingAddress.City+" "+o.ShippingAddress.PostalCode+" "+o.ShippingAddress.Country)
		}
		if tx.LoyaltyMembership == nil || !strings.Contains(tx.LoyaltyMembership.Tier, shop.Tier) {
			t.Errorf("order %s loyalty %v, the shop's tier %s", o.Number, tx.LoyaltyMembership, shop.Tier)
		}
	}
}

// TestProductionLinksThroughConnector runs production as an operator
// would on one machine, each part a process: Hitch in production, the
// reference shop and the reference connector, with a webhook receiver
// checking every event. Through the web SDK in Chromium it links accounts
// (a plain login, an e-mailed code, a security question, a wrong
// password), then checks every product end to end: transactions and
// subscriptions exactly as the shop shows them; refreshes that bring new
// and changed orders; a card switch the shop declines and one it takes; a
// vaulting; a password change at the shop that disconnects the account and
// a login that reconnects it; and detection. Canary credentials and card
// data appear in no log (debug level: JSON from hitch, text from the
// connector), database file, screenshot, webhook or error.
//
// It runs before the parallel tests, as TestProductionConnectorsShareWork
// does: its browsers would starve tests that time their own processes
// (TestCrashLosesNoEvent must kill hitch while deliveries are behind).
func TestProductionLinksThroughConnector(t *testing.T) {
	requireChromium(t)
	node, scripts := browserScripts(t)
	// SQLite, whose database file the canaries are looked for in;
	// TestProductionConnectorsShareWork runs production on PostgreSQL.
	func(t *testing.T, storeName string, db []string) {
		st := startProduction(t, db, 1)
		ctx := context.Background()

		// transaction_link, with each kind of login.
		res := st.link(t, node, scripts,
			loginFlow{Session: st.session(t, "transaction_link", "ada", nil), Username: shopAda, Password: shopPassword},
			loginFlow{Session: st.session(t, "transaction_link", "otp", nil), Username: shopOTP, Password: shopPassword, OTP: true},
			loginFlow{Session: st.session(t, "transaction_link", "quiz", nil), Username: shopQuiz, Password: shopPassword, Answer: "rex"},
			loginFlow{Session: st.session(t, "transaction_link", "wrong", nil), Username: shopAda, Password: "not-the-password"},
		)
		for i, want := range []string{"success", "success", "success", "error"} {
			if res[i].Status != want {
				t.Fatalf("login %d: %+v, want %s", i, res[i], want)
			}
		}
		t.Logf("%s: link time (credentials submitted to success, OTP wait excluded): %d, %d, %d ms", storeName, res[0].MS, res[1].MS, res[2].MS)
		for _, user := range []string{"ada", "otp", "quiz"} {
			st.sink.wait(t, "AUTHENTICATED", user, 1)
			st.sink.wait(t, "NEW_TRANSACTIONS_AVAILABLE", user, 1)
		}
		st.sink.wait(t, "NEW_SUBSCRIPTIONS_AVAILABLE", "ada", 1)
		if n := st.sink.count("AUTHENTICATED", "wrong"); n != 0 {
			t.Errorf("a wrong password raised %d AUTHENTICATED", n)
		}
		compareOrders(t, st.shopUser(t, shopAda), st.syncAll(t, "ada"))
		compareOrders(t, st.shopUser(t, shopOTP), st.syncAll(t, "otp"))

		// Refreshes: a new order appears, a changed one keeps its id.
		ada := st.shopUser(t, shopAda)
		changed := ada.Orders[len(ada.Orders)-1]
		before := st.syncAll(t, "ada")
		var changedID string
		for _, tx := range before {
			if tx.ExternalID == changed.Number {
				changedID = tx.ID
			}
		}
		newStatus := "Refunded"
		if changed.Status == "Refunded" {
			newStatus = "Returned"
		}
		var added struct {
			Number string `json:"number"`
		}
		st.shopAdmin(t, "POST", "/users/"+shopAda+"/orders", map[string]any{}, &added)
		st.shopAdmin(t, "POST", "/orders/"+changed.Number+"/status", map[string]any{"status": newStatus}, nil)
		st.sink.wait(t, "NEW_TRANSACTIONS_AVAILABLE", "ada", 2)
		updated := st.sink.wait(t, "UPDATED_TRANSACTIONS_AVAILABLE", "ada", 1)
		if !slices.ContainsFunc(updated, func(e sinkEvent) bool { return slices.Contains(e.Updated, changedID) }) {
			t.Errorf("UPDATED_TRANSACTIONS_AVAILABLE %+v does not name %s", updated, changedID)
		}
		compareOrders(t, st.shopUser(t, shopAda), st.syncAll(t, "ada"))

		// card_switcher: the shop declines one card and takes another.
		cardSessions := []string{
			st.session(t, "card_switcher", "ada", map[string]any{"card_id": "card-declined"}),
			st.session(t, "card_switcher", "ada", map[string]any{"card_id": "card-good"}),
			st.session(t, "vault", "ada", nil),
		}
		jwk, err := st.client.JWEKey(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var switchTimes []time.Duration
		for i, number := range []string{"4000000000000002", "6011111111111117"} {
			res := st.link(t, node, scripts, loginFlow{Session: cardSessions[i], Username: shopAda, Password: shopPassword})
			if res[0].Status != "success" {
				t.Fatalf("card switch login: %+v", res[0])
			}
			auth := st.sink.wait(t, "AUTHENTICATED", "ada", 2+i)
			task := auth[len(auth)-1].TaskID
			if task == nil {
				t.Fatalf("AUTHENTICATED without a task_id: %+v", auth[len(auth)-1])
			}
			jwe, err := client.EncryptCard(jwk, &client.CardPayload{
				User: client.CardUser{Name: client.CardName{FirstName: "Ada", LastName: "Lovelace"},
					Address: client.CardAddress{Street: "1 Main St", City: "Austin", Region: "TX", PostalCode: "78701", Country: "US"}},
				Card: client.CardData{Number: number, Expiration: "08/2031", CVV: "917"}})
			if err != nil {
				t.Fatal(err)
			}
			sent := time.Now()
			if _, err := st.client.SubmitCard(ctx, &client.SubmitCardRequest{JWE: jwe, TaskID: task}); err != nil {
				t.Fatal(err)
			}
			if i == 0 {
				failed := st.sink.wait(t, "CARD_FAILED", "ada", 1)
				if failed[0].Reason != "card" {
					t.Errorf("CARD_FAILED reason %q, want card", failed[0].Reason)
				}
				continue
			}
			st.sink.wait(t, "CARD_UPDATED", "ada", 1)
			switchTimes = append(switchTimes, time.Since(sent))
		}
		t.Logf("%s: card switch time (POST /card to CARD_UPDATED): %v", storeName, switchTimes)
		var onFile *refshop.Card
		for _, c := range st.shopUser(t, shopAda).Cards {
			if c.Default {
				onFile = &c
			}
		}
		if onFile == nil || onFile.Last4 != "1117" {
			t.Fatalf("the shop's default card %+v, want the switched one (1117)", onFile)
		}
		acct, err := st.client.GetAccount(ctx, "ada", refshopID, "card_switcher")
		if err != nil || !slices.Contains(acct.Connection.Scopes, client.Scope{Type: "update_card"}) {
			t.Errorf("after the switch: %+v %v", acct, err)
		}

		// vault: the card on file, never its number.
		if res := st.link(t, node, scripts, loginFlow{Session: cardSessions[2], Username: shopAda, Password: shopPassword}); res[0].Status != "success" {
			t.Fatalf("vault login: %+v", res[0])
		}
		vaulted := st.sink.wait(t, "VAULTING_SUCCEEDED", "ada", 1)
		if !strings.Contains(vaulted[0].Body, "1117") || strings.Contains(vaulted[0].Body, "6011111111111117") {
			t.Errorf("VAULTING_SUCCEEDED: %s", vaulted[0].Body)
		}

		// A password change at the shop revokes its sessions: the next
		// refresh disconnects the account; a new login reconnects it.
		st.shopAdmin(t, "POST", "/users/"+shopAda+"/password", map[string]any{"password": "battery-staple-9"}, nil)
		st.sink.wait(t, "ACCOUNT_LOGIN_REQUIRED", "ada", 1)
		if acct, err := st.client.GetAccount(ctx, "ada", refshopID, ""); err != nil || acct.Connection.Status != "disconnected" {
			t.Fatalf("after the password change: %+v %v", acct, err)
		}
		if res := st.link(t, node, scripts, loginFlow{Session: st.session(t, "transaction_link", "ada", nil), Username: shopAda, Password: "battery-staple-9"}); res[0].Status != "success" {
			t.Fatalf("login again: %+v", res[0])
		}
		if acct, err := st.client.GetAccount(ctx, "ada", refshopID, ""); err != nil || acct.Connection.Status != "connected" {
			t.Fatalf("after logging in again: %+v %v", acct, err)
		}

		// Detection, from the shop's sign-in recovery page.
		sent := time.Now()
		if _, err := st.client.Detect(ctx, &client.DetectRequest{ExternalUserID: "detect-me", Email: shopQuiz}); err != nil {
			t.Fatal(err)
		}
		st.sink.wait(t, "NEW_DETECTED_ACCOUNTS_AVAILABLE", "detect-me", 1)
		if d := time.Since(sent); d > time.Minute {
			t.Errorf("detection took %v, over a minute", d)
		}
		if found, err := st.client.DetectedAccounts(ctx, "detect-me", refshopID); err != nil || len(found) != 1 {
			t.Errorf("detected at the shop: %+v %v", found, err)
		}

		// Canaries: the passwords, the codes e-mailed, the card numbers and
		// the CVV reached no log, database file, screenshot or webhook.
		// The CVV is three digits, which text logs hold in durations and
		// sizes: it is looked for as a quoted value and after a key.
		canaries := []string{shopPassword, "battery-staple-9", "not-the-password", "4000000000000002", "6011111111111117",
			`"917"`, "cvv=917", `cvv":"917`}
		canaries = append(canaries, mailedCodes(t, st.shop, shopOTP)...)
		st.checkCanaries(t, canaries)
		if bad := st.sink.badSignatures(); bad != 0 {
			t.Errorf("%d webhooks had a bad signature", bad)
		}
	}(t, "sqlite", sqliteOnly(t))
}

// mailedCodes returns the one-time codes the shop e-mailed to address.
func mailedCodes(t *testing.T, shop, address string) []string {
	t.Helper()
	resp, err := http.Get(shop + "/mailbox?to=" + address)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	codes := regexp.MustCompile(`\b\d{6}\b`).FindAllString(string(b), -1)
	if len(codes) == 0 {
		t.Fatal("the shop e-mailed no code")
	}
	return codes
}

// checkCanaries fails when a canary appears in a process's logs, a file of
// the data folder (the SQLite database), a screenshot or a webhook.
func (st *prodStack) checkCanaries(t *testing.T, canaries []string) {
	t.Helper()
	sources := map[string]string{"hitch logs": st.hitch.logs.String(), "webhooks": st.sink.bodies()}
	for i, c := range st.conns {
		sources[fmt.Sprintf("connector %d logs", i)] = c.logs.String()
	}
	for _, dir := range []string{st.dataDir, st.screenshots} {
		if dir == "" {
			continue
		}
		_ = filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				b, _ := os.ReadFile(path)
				sources[path] = string(b)
			}
			return nil
		})
	}
	for name, text := range sources {
		for _, c := range canaries {
			if holdsCanary(text, c) {
				t.Errorf("%s contain the canary %q", name, c)
			}
		}
	}
}

// holdsCanary reports whether text holds canary. A short number (a mailed
// code) counts only as a whole number: nanoseconds in log times and hex
// ids hold any six digits now and then.
func holdsCanary(text, canary string) bool {
	if len(canary) >= 12 || strings.Trim(canary, "0123456789") != "" {
		return strings.Contains(text, canary)
	}
	return regexp.MustCompile(`(^|[^0-9A-Za-z])` + canary + `([^0-9A-Za-z]|$)`).MatchString(text)
}

// eventSink is a webhook endpoint that verifies each delivery's signature
// and keeps the events.
type eventSink struct {
	mu     sync.Mutex
	secret string
	events []sinkEvent
	bad    int
}

type sinkEvent struct {
	Type           string            `json:"event"`
	ExternalUserID string            `json:"external_user_id"`
	TaskID         *int64            `json:"task_id"`
	Updated        []string          `json:"-"`
	Reason         string            `json:"-"`
	Metadata       map[string]string `json:"-"`
	Body           string            `json:"-"`
}

func (s *eventSink) setSecret(secret string) { s.mu.Lock(); s.secret = secret; s.mu.Unlock() }

func (s *eventSink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := client.VerifyWebhook(r.Header, body, s.secret, 5*time.Minute); err != nil {
		s.bad++
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	var ev sinkEvent
	var extra struct {
		Updated []struct {
			ID string `json:"id"`
		} `json:"updated"`
		Data struct {
			Reason   string            `json:"reason"`
			Metadata map[string]string `json:"metadata"`
		} `json:"data"`
	}
	if json.Unmarshal(body, &ev) != nil || json.Unmarshal(body, &extra) != nil {
		s.bad++
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	for _, u := range extra.Updated {
		ev.Updated = append(ev.Updated, u.ID)
	}
	ev.Reason, ev.Metadata, ev.Body = extra.Data.Reason, extra.Data.Metadata, string(body)
	s.events = append(s.events, ev)
	w.WriteHeader(http.StatusOK)
}

func (s *eventSink) matching(typ, user string) []sinkEvent {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []sinkEvent
	for _, ev := range s.events {
		if ev.Type == typ && ev.ExternalUserID == user {
			out = append(out, ev)
		}
	}
	return out
}

func (s *eventSink) count(typ, user string) int { return len(s.matching(typ, user)) }

// wait returns the user's events of type typ once there are at least n.
func (s *eventSink) wait(t *testing.T, typ, user string, n int) []sinkEvent {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) {
		if evs := s.matching(typ, user); len(evs) >= n {
			return evs
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("fewer than %d %s webhooks for %s (got %d)", n, typ, user, s.count(typ, user))
	return nil
}

func (s *eventSink) bodies() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var b strings.Builder
	for _, ev := range s.events {
		b.WriteString(ev.Body)
		b.WriteByte('\n')
	}
	return b.String()
}

func (s *eventSink) badSignatures() int { s.mu.Lock(); defer s.mu.Unlock(); return s.bad }
