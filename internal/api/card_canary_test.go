package api_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"math/big"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/hitchdev/hitch/client"
	"github.com/hitchdev/hitch/internal/account"
	"github.com/hitchdev/hitch/internal/store/sqlite"
	"github.com/hitchdev/hitch/internal/store/storetest"
)

// canaryNumber is a random Luhn-valid 16-digit Visa number: it can only
// be found where Hitch put it.
func canaryNumber(t *testing.T) string {
	t.Helper()
	digits := "4"
	for len(digits) < 15 {
		n, err := rand.Int(rand.Reader, big.NewInt(10))
		if err != nil {
			t.Fatal(err)
		}
		digits += n.String()
	}
	sum := 0
	for i := len(digits) - 1; i >= 0; i-- {
		d := int(digits[i] - '0')
		if (len(digits)-1-i)%2 == 0 { // doubled: the check digit goes right of it
			if d *= 2; d > 9 {
				d -= 9
			}
		}
		sum += d
	}
	return digits + strconv.Itoa((10-sum%10)%10)
}

func canaryCVV(t *testing.T) string {
	t.Helper()
	n, err := rand.Int(rand.Reader, big.NewInt(9000))
	if err != nil {
		t.Fatal(err)
	}
	return strconv.FormatInt(1000+n.Int64(), 10)
}

// Card numbers and CVVs go through every path of POST /card (both forms,
// a linked account, refusals, a production task claimed by its connector),
// and none of them is then found in the logs, the database or the events.
func TestCardDataLeavesNoTrace(t *testing.T) {
	t.Parallel()
	for _, env := range []string{"development", "production"} {
		t.Run(env+"/sqlite", func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			st, err := sqlite.Open(context.Background(), filepath.Join(dir, "hitch.db"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			if err := st.Migrate(context.Background()); err != nil {
				t.Fatal(err)
			}
			h := newHarness(t, st, withWorkers, func(o *harnessOptions) { o.env = env })
			canaries := sendCanaries(t, h)
			dump := func() []byte {
				var all []byte
				for _, name := range []string{"hitch.db", "hitch.db-wal", "hitch.db-journal"} {
					b, err := os.ReadFile(filepath.Join(dir, name))
					if err != nil && !os.IsNotExist(err) {
						t.Fatal(err)
					}
					all = append(all, b...)
				}
				return all
			}
			checkNoTrace(t, h, canaries, dump)
		})
		t.Run(env+"/postgres", func(t *testing.T) {
			t.Parallel()
			st, schema := storetest.OpenPostgresSchema(t)
			h := newHarness(t, st, withWorkers, func(o *harnessOptions) { o.env = env })
			canaries := sendCanaries(t, h)
			checkNoTrace(t, h, canaries, func() []byte { return dumpSchema(t, schema) })
		})
	}
}

type canary struct{ number, cvv string }

// sendCanaries submits canary cards through every path and returns them.
func sendCanaries(t *testing.T, h *harness) []canary {
	ctx := context.Background()
	var out []canary
	next := func() canary {
		c := canary{canaryNumber(t), canaryCVV(t)}
		out = append(out, c)
		return c
	}
	payload := func(c canary) *client.CardPayload {
		p := goodCard(c.number)
		p.Card.CVV = c.cvv
		return p
	}
	task := func(user string) int64 {
		t.Helper()
		_, id, err := h.cards.Authenticate(ctx, account.LinkParams{ClientID: h.clientID, ExternalUserID: user,
			MerchantID: 1, Product: "card_switcher", CardID: ptr("card-" + user)}, false)
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	submit := func(req *client.SubmitCardRequest, wantOK bool) {
		t.Helper()
		_, err := h.api.SubmitCard(ctx, req)
		if (err == nil) != wantOK {
			t.Fatalf("submit: %v, want success %v", err, wantOK)
		}
	}

	// Refused, in both forms: a bad CVV, a past expiration, a failed Luhn
	// check, card data where a string of another field goes.
	for i, mutate := range []func(p *client.CardPayload){
		func(p *client.CardPayload) { p.Card.CVV += "99" },
		func(p *client.CardPayload) { p.Card.Expiration = "01/2001" },
		func(p *client.CardPayload) {
			p.Card.Number = p.Card.Number[:15] + strconv.Itoa((int(p.Card.Number[15]-'0')+1)%10)
		},
		func(p *client.CardPayload) { p.User.Address.PostalCode = p.Card.Number },
	} {
		c := next()
		id := task("refused-" + strconv.Itoa(i))
		p := payload(c)
		mutate(p)
		if p.Card.Number != c.number {
			out = append(out, canary{number: p.Card.Number})
		}
		submit(&client.SubmitCardRequest{JWE: h.encrypt(t, p), TaskID: &id}, false)
		submit(&client.SubmitCardRequest{TaskID: &id, User: &p.User, Card: &p.Card}, false)
	}
	// Raw bodies that are not even JSON-shaped right.
	c := next()
	h.do("POST", "/card", fmt.Sprintf(`{"task_id": 1, "card": {"number": %s, "cvv": %s}}`, c.number, c.cvv), nil)
	h.do("POST", "/card", fmt.Sprintf(`{"task_id": 1, "card": {"number": "%s", "cvv": "%s", "extra`, c.number, c.cvv), nil)
	h.do("POST", "/card", fmt.Sprintf(`{"task_id": "%s", "jwe": "%s"}`, c.number, c.cvv), nil)

	// Accepted: the JWE form for a task and for a linked account, and the
	// plain form.
	id := task("jwe")
	submit(&client.SubmitCardRequest{JWE: h.encrypt(t, payload(next())), TaskID: &id}, true)
	submit(&client.SubmitCardRequest{JWE: h.encrypt(t, payload(next())), ExternalUserID: "jwe", MerchantID: 1}, true)
	id2 := task("plain")
	p := payload(next())
	submit(&client.SubmitCardRequest{TaskID: &id2, User: &p.User, Card: &p.Card}, true)

	if h.env == "development" {
		h.waitEvent(t, h.clientID, "CARD_UPDATED", id2)
		return out
	}
	// Production: a connector claims the cards and reports results.
	conn := h.newConnector(t)
	auth := http.Header{"Authorization": {basic(conn.ID, conn.Secret)}}
	for _, task := range []int64{id, id2} {
		path := "/internal/tasks/" + strconv.FormatInt(task, 10)
		if r := h.do("POST", path+"/claim", map[string]any{"client_id": h.clientID}, auth); r.status != 200 ||
			!bytes.Contains(r.body, []byte(`"number":"4`)) {
			t.Fatalf("claim: %d", r.status)
		}
		if r := h.do("POST", path+"/result", map[string]any{"client_id": h.clientID, "status": "succeeded"}, auth); r.status != 200 {
			t.Fatalf("result: %d %s", r.status, r.body)
		}
		h.waitEvent(t, h.clientID, "CARD_UPDATED", task)
	}
	return out
}

// checkNoTrace looks for every canary in the logs, the database and the
// events' payloads.
func checkNoTrace(t *testing.T, h *harness, canaries []canary, dump func() []byte) {
	t.Helper()
	var payloads []byte
	for _, ev := range h.events(h.clientID) {
		payloads = append(payloads, ev.Payload...)
	}
	places := map[string][]byte{"logs": []byte(h.logs.String()), "database": dump(), "event payloads": payloads}
	if !bytes.Contains(places["logs"], []byte(`"path":"/card"`)) || len(places["database"]) == 0 || len(payloads) == 0 {
		t.Fatal("nothing to scan: the test did not run what it checks")
	}
	for where, data := range places {
		for _, c := range canaries {
			if bytes.Contains(data, []byte(c.number)) {
				t.Errorf("the %s hold card number %s", where, c.number)
			}
			if len(c.number) >= 12 && bytes.Contains(data, []byte(c.number[:12])) {
				t.Errorf("the %s hold the first 12 digits of %s", where, c.number)
			}
			if c.cvv != "" && (bytes.Contains(data, []byte(`"`+c.cvv+`"`)) || bytes.Contains(data, []byte(`=`+c.cvv))) {
				t.Errorf("the %s hold CVV %s", where, c.cvv)
			}
		}
		if bytes.Contains(data, []byte(`"cvv"`)) {
			t.Errorf("the %s hold a cvv field", where)
		}
	}
}

// dumpSchema reads every row of every table of a PostgreSQL schema as text.
func dumpSchema(t *testing.T, schema string) []byte {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, storetest.PostgresURL())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT table_name FROM information_schema.tables WHERE table_schema = $1`, schema)
	if err != nil {
		t.Fatal(err)
	}
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	var out []byte
	for _, table := range tables {
		var text *string
		ident := pgx.Identifier{schema, table}.Sanitize()
		if err := conn.QueryRow(ctx, `SELECT string_agg(t::text, E'\n') FROM `+ident+` t`).Scan(&text); err != nil {
			t.Fatal(err)
		}
		if text != nil {
			out = append(out, *text...)
		}
	}
	if len(tables) < 10 {
		t.Fatalf("only %d tables in schema %s", len(tables), schema)
	}
	return out
}
