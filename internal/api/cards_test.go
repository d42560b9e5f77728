package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hitchdev/hitch/client"
	"github.com/hitchdev/hitch/internal/account"
	"github.com/hitchdev/hitch/internal/card"
)

// goodCard is card data that passes every rule; number decides the
// simulated outcome (internal/card/testcards.go).
func goodCard(number string) *client.CardPayload {
	return &client.CardPayload{
		User: client.CardUser{
			Name:        client.CardName{FirstName: "Ada", LastName: "Lovelace"},
			Address:     client.CardAddress{Street: "12 Analytical Way", City: "New York", Region: "US-NY", PostalCode: "10001", Country: "US"},
			PhoneNumber: "+12125550123",
		},
		Card: client.CardData{Number: number, Expiration: "12/2031", CVV: "123"},
	}
}

// envelope is a recorded event's payload.
type envelope struct {
	ID             string         `json:"id"`
	Event          string         `json:"event"`
	TaskID         *int64         `json:"task_id"`
	SessionID      *string        `json:"session_id"`
	ExternalUserID string         `json:"external_user_id"`
	Sequence       int64          `json:"sequence"`
	Merchant       map[string]any `json:"merchant"`
	Data           map[string]any `json:"data"`
}

// waitEvent waits for the developer's first event of typ about task.
func (h *harness) waitEvent(t *testing.T, clientID, typ string, task int64) envelope {
	t.Helper()
	var found envelope
	eventually(t, typ+" of task "+strconv.FormatInt(task, 10), func() bool {
		for _, ev := range h.events(clientID) {
			var env envelope
			if err := json.Unmarshal(ev.Payload, &env); err != nil {
				t.Fatal(err)
			}
			if env.Event == typ && env.TaskID != nil && *env.TaskID == task {
				found = env
				return true
			}
		}
		return false
	})
	return found
}

// authenticated links an account for the card switcher and returns the
// task_id of its AUTHENTICATED event.
func (h *harness) authenticated(t testing.TB, user string, merchantID int64, cardID string, metadata map[string]string) envelope {
	t.Helper()
	if err := h.api.DevLinkAccount(context.Background(), &client.DevLinkRequest{ExternalUserID: user, MerchantID: merchantID,
		CardSwitcher: true, CardID: &cardID, Metadata: metadata}); err != nil {
		t.Fatal(err)
	}
	for _, ev := range h.events(h.clientID) {
		var env envelope
		if err := json.Unmarshal(ev.Payload, &env); err != nil {
			t.Fatal(err)
		}
		if env.Event == "AUTHENTICATED" && env.ExternalUserID == user && env.Data["card_id"] == cardID {
			if env.TaskID == nil || *env.TaskID <= 0 || *env.TaskID >= 1<<53 {
				t.Fatalf("AUTHENTICATED task_id = %v", env.TaskID)
			}
			return env
		}
	}
	t.Fatalf("no AUTHENTICATED event for %s", user)
	return envelope{}
}

func (h *harness) encrypt(t *testing.T, payload *client.CardPayload) string {
	t.Helper()
	key, err := h.api.JWEKey(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	jwe, err := client.EncryptCard(key, payload)
	if err != nil {
		t.Fatal(err)
	}
	return jwe
}

func TestCardSwitchSucceeds(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		ctx := context.Background()
		auth := h.authenticated(t, "u1", 1, "card-1", map[string]string{"order": "42"})
		if auth.Data["send_card"] != true || auth.Data["entrypoint"] != nil ||
			auth.Data["metadata"].(map[string]any)["order"] != "42" {
			t.Fatalf("AUTHENTICATED data = %v", auth.Data)
		}
		// Waiting for its card: no scope yet, the action pending.
		a, err := h.api.GetAccount(ctx, "u1", 1, "card_switcher")
		if err != nil || len(a.Connection.Scopes) != 0 || *a.LastUserAction.Status != account.ActionPending {
			t.Fatalf("account before the card = %+v, %v", a, err)
		}

		jwe := h.encrypt(t, goodCard("4242424242424242"))
		start := time.Now()
		res, err := h.api.SubmitCard(ctx, &client.SubmitCardRequest{JWE: jwe, TaskID: auth.TaskID})
		if err != nil || res.Message != "Success" || res.TaskID != *auth.TaskID {
			t.Fatalf("submit = %+v, %v", res, err)
		}
		updated := h.waitEvent(t, h.clientID, "CARD_UPDATED", *auth.TaskID)
		// The bound on the simulated outcome.
		if took := time.Since(start); took > 2*time.Second {
			t.Errorf("CARD_UPDATED recorded %v after the card was posted, want within 2 s", took)
		}
		if updated.Data["card_id"] != "card-1" || updated.Data["metadata"].(map[string]any)["order"] != "42" ||
			updated.ExternalUserID != "u1" || updated.Merchant["id"] != float64(1) {
			t.Fatalf("CARD_UPDATED = %+v", updated)
		}
		if _, ok := updated.Data["subscriptions"]; ok {
			t.Fatalf("Amazon is no subscription merchant, yet CARD_UPDATED has subscriptions: %v", updated.Data)
		}
		a, err = h.api.GetAccount(ctx, "u1", 1, "card_switcher")
		if err != nil || len(a.Connection.Scopes) != 1 || a.Connection.Scopes[0].Type != account.ScopeUpdateCard ||
			*a.LastUserAction.Status != account.ActionSuccess || *a.Lifecycle.Status != account.LifecycleAuthenticated {
			t.Fatalf("account after the switch = %+v, %v", a, err)
		}

		// The task has its card: a second one is refused, and nothing more
		// is recorded.
		_, err = h.api.SubmitCard(ctx, &client.SubmitCardRequest{JWE: h.encrypt(t, goodCard("4242424242424242")), TaskID: auth.TaskID})
		expectError(t, err, 409, "INVALID_REQUEST", "TASK_NOT_AWAITING_CARD")

		// task_id as the public service's string form, and the plain form.
		auth2 := h.authenticated(t, "u1", 2, "card-2", nil)
		body := map[string]any{"task_id": strconv.FormatInt(*auth2.TaskID, 10), "user": goodCard("").User,
			"card": map[string]string{"number": "5555555555554444", "expiration": "01/40", "cvv": "9876"}}
		if r := h.do("POST", "/card", body, nil); r.status != 200 {
			t.Fatalf("plain form with a string task_id: %d %s", r.status, r.body)
		}
		h.waitEvent(t, h.clientID, "CARD_UPDATED", *auth2.TaskID)
	}, withWorkers)
}

func TestCardSwitchTestCardsFail(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		ctx := context.Background()
		i := 0
		for number, reason := range card.TestCards {
			i++
			user := "u" + strconv.Itoa(i)
			auth := h.authenticated(t, user, 1, "card-x", nil)
			if _, err := h.api.SubmitCard(ctx, &client.SubmitCardRequest{JWE: h.encrypt(t, goodCard(number)), TaskID: auth.TaskID}); err != nil {
				t.Fatalf("%s: %v", number, err)
			}
			failed := h.waitEvent(t, h.clientID, "CARD_FAILED", *auth.TaskID)
			if failed.Data["reason"] != reason || failed.Data["card_id"] != "card-x" {
				t.Fatalf("%s: CARD_FAILED data = %v, want reason %q", number, failed.Data, reason)
			}
			a, err := h.api.GetAccount(ctx, user, 1, "card_switcher")
			if err != nil || len(a.Connection.Scopes) != 0 || *a.LastUserAction.Status != account.ActionFailure {
				t.Fatalf("%s: account after a failed switch = %+v, %v", number, a, err)
			}
		}
	}, withWorkers)
}

func TestCardSwitchSubscriptionMerchant(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		auth := h.authenticated(t, "u1", 4, "card-1", nil) // Netflix
		if _, err := h.api.SubmitCard(context.Background(), &client.SubmitCardRequest{
			JWE: h.encrypt(t, goodCard("4242424242424242")), TaskID: auth.TaskID}); err != nil {
			t.Fatal(err)
		}
		updated := h.waitEvent(t, h.clientID, "CARD_UPDATED", *auth.TaskID)
		subs, _ := updated.Data["subscriptions"].([]any)
		if len(subs) == 0 {
			t.Fatalf("CARD_UPDATED at Netflix has no subscriptions: %v", updated.Data)
		}
		for _, s := range subs {
			id := s.(map[string]any)["id"].(string)
			if r := h.do("GET", "/subscriptions/"+id, nil, nil); r.status != 200 {
				t.Fatalf("GET /subscriptions/%s: %d %s", id, r.status, r.body)
			}
		}
	}, withWorkers)
}

func TestCardWindowCloses(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		auth := h.authenticated(t, "u1", 1, "card-1", nil)
		failed := h.waitEvent(t, h.clientID, "CARD_FAILED", *auth.TaskID)
		if failed.Data["reason"] != card.ReasonNoCard {
			t.Fatalf("CARD_FAILED data = %v", failed.Data)
		}
		_, err := h.api.SubmitCard(context.Background(), &client.SubmitCardRequest{
			JWE: h.encrypt(t, goodCard("4242424242424242")), TaskID: auth.TaskID})
		expectError(t, err, 409, "INVALID_REQUEST", "TASK_NOT_AWAITING_CARD")
	}, withWorkers, func(o *harnessOptions) { o.cardWindow = 300 * time.Millisecond })

	// A card after the window, before the job has failed the task.
	each(t, func(t *testing.T, h *harness) {
		auth := h.authenticated(t, "u1", 1, "card-1", nil)
		h.clock.Advance(16 * time.Second)
		_, err := h.api.SubmitCard(context.Background(), &client.SubmitCardRequest{
			JWE: h.encrypt(t, goodCard("4242424242424242")), TaskID: auth.TaskID})
		expectError(t, err, 409, "INVALID_REQUEST", "CARD_WINDOW_CLOSED")
	})
}

func TestCardForLinkedAccount(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		ctx := context.Background()
		jwe := h.encrypt(t, goodCard("4242424242424242"))
		_, err := h.api.SubmitCard(ctx, &client.SubmitCardRequest{JWE: jwe, ExternalUserID: "nobody", MerchantID: 1})
		expectError(t, err, 404, "USER_ERROR", "USER_NOT_FOUND")

		if err := h.api.DevLinkAccount(ctx, &client.DevLinkRequest{ExternalUserID: "u1", MerchantID: 1,
			Transactions: &client.DevTransactions{New: false}}); err != nil {
			t.Fatal(err)
		}
		_, err = h.api.SubmitCard(ctx, &client.SubmitCardRequest{JWE: jwe, ExternalUserID: "u1", MerchantID: 2})
		expectError(t, err, 404, "MERCHANT_ACCOUNT_ERROR", "MERCHANT_ACCOUNT_NOT_FOUND")

		res, err := h.api.SubmitCard(ctx, &client.SubmitCardRequest{JWE: jwe, ExternalUserID: "u1", MerchantID: 1})
		if err != nil || res.TaskID <= 0 {
			t.Fatalf("submit for a linked account = %+v, %v", res, err)
		}
		updated := h.waitEvent(t, h.clientID, "CARD_UPDATED", res.TaskID)
		if updated.Data["card_id"] != nil || updated.ExternalUserID != "u1" {
			t.Fatalf("CARD_UPDATED = %+v", updated)
		}
		a, err := h.api.GetAccount(ctx, "u1", 1, "card_switcher")
		if err != nil || len(a.Connection.Scopes) != 1 || *a.LastUserAction.Status != account.ActionSuccess {
			t.Fatalf("account = %+v, %v", a, err)
		}

		if err := h.api.DevDisconnectAccount(ctx, "u1", 1); err != nil {
			t.Fatal(err)
		}
		_, err = h.api.SubmitCard(ctx, &client.SubmitCardRequest{JWE: jwe, ExternalUserID: "u1", MerchantID: 1})
		expectError(t, err, 400, "MERCHANT_ACCOUNT_ERROR", "MERCHANT_ACCOUNT_DISCONNECTED")
	}, withWorkers)
}

// The plain form takes an account already linked, as the JWE form does:
// external_user_id and merchant_id open a task at once, and the same rules
// refuse an unknown user, another developer's account and a mix of forms.
func TestPlainCardForLinkedAccount(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		ctx := context.Background()
		good := goodCard("4242424242424242")
		plain := func(c *client.Client, user string, merchantID int64) (*client.SubmitCardResponse, error) {
			return c.SubmitCard(ctx, &client.SubmitCardRequest{User: &good.User, Card: &good.Card,
				ExternalUserID: user, MerchantID: merchantID})
		}
		_, err := plain(h.api, "nobody", 1)
		expectError(t, err, 404, "USER_ERROR", "USER_NOT_FOUND")

		if err := h.api.DevLinkAccount(ctx, &client.DevLinkRequest{ExternalUserID: "u1", MerchantID: 1,
			Transactions: &client.DevTransactions{New: false}}); err != nil {
			t.Fatal(err)
		}
		_, err = plain(h.api, "u1", 2)
		expectError(t, err, 404, "MERCHANT_ACCOUNT_ERROR", "MERCHANT_ACCOUNT_NOT_FOUND")
		_, err = plain(h.clientFor(h.newDeveloper("development")), "u1", 1)
		expectError(t, err, 404, "USER_ERROR", "USER_NOT_FOUND")
		for name, body := range map[string]map[string]any{
			"task and account": {"user": good.User, "card": good.Card, "task_id": 1, "external_user_id": "u1", "merchant_id": 1},
			"account alone":    {"user": good.User, "card": good.Card, "external_user_id": "u1"},
		} {
			r := h.do("POST", "/card", body, nil)
			if e := r.errorBody(t); r.status != 400 || e.Code != "INVALID_FIELD" {
				t.Errorf("%s: %d %s", name, r.status, r.body)
			}
		}

		res, err := plain(h.api, "u1", 1)
		if err != nil || res.TaskID <= 0 {
			t.Fatalf("plain card for a linked account = %+v, %v", res, err)
		}
		updated := h.waitEvent(t, h.clientID, "CARD_UPDATED", res.TaskID)
		if updated.Data["card_id"] != nil || updated.ExternalUserID != "u1" || updated.Merchant["id"] != float64(1) {
			t.Fatalf("CARD_UPDATED = %+v", updated)
		}
	}, withWorkers)
}

func TestCardRequestErrors(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		ctx := context.Background()
		auth := h.authenticated(t, "u1", 1, "card-1", nil)
		task := strconv.FormatInt(*auth.TaskID, 10)
		jwe := h.encrypt(t, goodCard("4242424242424242"))
		user := goodCard("").User
		cases := []struct {
			name    string
			body    any
			status  int
			code    string
			message string // a part of the message
		}{
			{"empty", map[string]any{}, 400, "INVALID_FIELD", "user field is required"},
			{"both forms", map[string]any{"jwe": jwe, "task_id": task, "user": user}, 400, "INVALID_FIELD", "not both"},
			{"jwe without target", map[string]any{"jwe": jwe}, 400, "INVALID_FIELD", "task_id"},
			{"task and account", map[string]any{"jwe": jwe, "task_id": task, "external_user_id": "u1", "merchant_id": 1}, 400, "INVALID_FIELD", "not both"},
			{"bad task_id", map[string]any{"jwe": jwe, "task_id": "12a"}, 400, "INVALID_FIELD", "task_id"},
			{"negative task_id", map[string]any{"jwe": jwe, "task_id": -4}, 400, "INVALID_FIELD", "task_id"},
			{"unknown task", map[string]any{"jwe": jwe, "task_id": 77}, 404, "TASK_NOT_FOUND", "task"},
			{"not a JWE", map[string]any{"jwe": "abc", "task_id": task}, 400, "INVALID_JWE", "five parts"},
			{"plain without task", map[string]any{"user": user, "card": goodCard("4242424242424242").Card}, 400, "INVALID_FIELD", "task_id"},
			{"plain, bad Luhn", map[string]any{"task_id": task, "user": user,
				"card": map[string]string{"number": "4242424242424241", "expiration": "12/2031", "cvv": "123"}}, 400, "INVALID_FIELD", "card.number"},
			{"plain, unknown field", map[string]any{"task_id": task, "user": user,
				"card": map[string]string{"number": "4242424242424242", "expiration": "12/2031", "cvv": "123", "pin": "1"}}, 400, "INVALID_FIELD",
				"The card object contains a field that is not allowed."},
			// A card number sent as a key is not repeated, wherever it stands.
			{"plain, card number as a key", map[string]any{"task_id": task, "user": user,
				"card": map[string]string{"5555555555554444": "12/2031"}}, 400, "INVALID_FIELD",
				"The card object contains a field that is not allowed."},
			{"plain, card number as a key in the address", map[string]any{"task_id": task, "card": goodCard("4242424242424242").Card,
				"user": map[string]any{"name": user.Name, "address": map[string]string{"5555555555554444": "x"}}}, 400, "INVALID_FIELD",
				"The user.address object contains a field that is not allowed."},
			{"plain, card number as a key of the body", map[string]any{"task_id": task, "user": user,
				"card": goodCard("4242424242424242").Card, "5555555555554444": "123"}, 400, "INVALID_FIELD",
				"The request body contains a field that is not allowed."},
			{"plain, card number as a repeated key", `{"task_id": ` + task + `, "card": {"number": "4242424242424242", "number": "5555555555554444"}}`,
				400, "INVALID_FIELD", "The card.number field appears more than once."},
			{"plain, number not a string", map[string]any{"task_id": task, "user": user,
				"card": map[string]any{"number": 4242424242424242, "expiration": "12/2031", "cvv": "123"}}, 400, "INVALID_FIELD", "card.number"},
		}
		for _, c := range cases {
			r := h.do("POST", "/card", c.body, nil)
			e := r.errorBody(t)
			if r.status != c.status || e.Code != c.code || !strings.Contains(e.Message, c.message) {
				t.Errorf("%s: %d %s %q, want %d %s containing %q", c.name, r.status, e.Code, e.Message, c.status, c.code, c.message)
			}
			if strings.Contains(string(r.body), "555555") {
				t.Errorf("%s: the error repeats the card number: %s", c.name, r.body)
			}
		}

		// Each rule of the payload, inside a JWE: INVALID_JWE naming the field.
		fields := []struct {
			field string
			set   func(p *client.CardPayload)
		}{
			{"user.name.first_name", func(p *client.CardPayload) { p.User.Name.FirstName = strings.Repeat("a", 256) }},
			{"user.name.last_name", func(p *client.CardPayload) { p.User.Name.LastName = "" }},
			{"user.address.street", func(p *client.CardPayload) { p.User.Address.Street = strings.Repeat("s", 47) }},
			{"user.address.street2", func(p *client.CardPayload) { p.User.Address.Street2 = strings.Repeat("s", 47) }},
			{"user.address.city", func(p *client.CardPayload) { p.User.Address.City = strings.Repeat("c", 33) }},
			{"user.address.region", func(p *client.CardPayload) { p.User.Address.Region = "CA-ON" }},
			{"user.address.postal_code", func(p *client.CardPayload) { p.User.Address.PostalCode = "1234" }},
			{"user.address.country", func(p *client.CardPayload) { p.User.Address.Country = "ZZ" }},
			{"user.phone_number", func(p *client.CardPayload) { p.User.PhoneNumber = "2125550123" }},
			{"card.number", func(p *client.CardPayload) { p.Card.Number = "4242 4242 4242 4242" }},
			{"card.number", func(p *client.CardPayload) { p.Card.Number = "42424242421" }},
			{"card.expiration", func(p *client.CardPayload) { p.Card.Expiration = "13/2031" }},
			{"card.expiration", func(p *client.CardPayload) { p.Card.Expiration = "01/2020" }},
			{"card.cvv", func(p *client.CardPayload) { p.Card.CVV = "12345" }},
		}
		for _, f := range fields {
			p := goodCard("4242424242424242")
			f.set(p)
			_, err := h.api.SubmitCard(ctx, &client.SubmitCardRequest{JWE: h.encrypt(t, p), TaskID: auth.TaskID})
			e := expectError(t, err, 400, "INVALID_REQUEST", "INVALID_JWE")
			if !strings.Contains(e.Message, f.field) {
				t.Errorf("%s: message %q does not name the field", f.field, e.Message)
			}
		}

		// The task still takes its card after all those refusals.
		if _, err := h.api.SubmitCard(ctx, &client.SubmitCardRequest{JWE: jwe, TaskID: auth.TaskID}); err != nil {
			t.Fatal(err)
		}

		// Another developer's task is unknown, and so is its account.
		other := h.clientFor(h.newDeveloper("development"))
		auth2 := h.authenticated(t, "u1", 2, "card-2", nil)
		_, err := other.SubmitCard(ctx, &client.SubmitCardRequest{JWE: jwe, TaskID: auth2.TaskID})
		expectError(t, err, 404, "INVALID_REQUEST", "TASK_NOT_FOUND")
		_, err = other.SubmitCard(ctx, &client.SubmitCardRequest{JWE: jwe, ExternalUserID: "u1", MerchantID: 1})
		expectError(t, err, 404, "USER_ERROR", "USER_NOT_FOUND")
	})
}

func TestVaulting(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		ctx := context.Background()
		if err := h.api.DevLinkAccount(ctx, &client.DevLinkRequest{ExternalUserID: "u1", MerchantID: 1,
			CardID: ptr("card-9"), Vault: &client.DevVault{}, Metadata: map[string]string{"k": "v"}}); err != nil {
			t.Fatal(err)
		}
		var auth envelope
		for _, ev := range h.events(h.clientID) {
			if ev.Type == "AUTHENTICATED" {
				if err := json.Unmarshal(ev.Payload, &auth); err != nil {
					t.Fatal(err)
				}
			}
		}
		if auth.TaskID == nil || auth.Data["send_card"] != false {
			t.Fatalf("vault AUTHENTICATED = %+v", auth)
		}
		ok := h.waitEvent(t, h.clientID, "VAULTING_SUCCEEDED", *auth.TaskID)
		pm, _ := ok.Data["payment_method"].(map[string]any)
		if ok.Data["card_id"] != "card-9" || pm["brand"] != "visa" || len(pm["last_four"].(string)) != 4 ||
			len(pm["expiration"].(string)) != 7 || ok.Data["metadata"].(map[string]any)["k"] != "v" {
			t.Fatalf("VAULTING_SUCCEEDED data = %v", ok.Data)
		}
		a, err := h.api.GetAccount(ctx, "u1", 1, "vault")
		if err != nil || *a.Lifecycle.Status != account.LifecycleAuthenticated || *a.LastUserAction.Status != account.ActionSuccess {
			t.Fatalf("vault account = %+v, %v", a, err)
		}

		if err := h.api.DevLinkAccount(ctx, &client.DevLinkRequest{ExternalUserID: "u2", MerchantID: 1,
			Vault: &client.DevVault{Outcome: "failed"}}); err != nil {
			t.Fatal(err)
		}
		eventually(t, "VAULTING_FAILED", func() bool {
			for _, ev := range h.events(h.clientID) {
				var env envelope
				_ = json.Unmarshal(ev.Payload, &env)
				if env.Event == "VAULTING_FAILED" && env.ExternalUserID == "u2" {
					return env.Data["reason"] == card.ReasonNotRetrieved
				}
			}
			return false
		})
		a, err = h.api.GetAccount(ctx, "u2", 1, "vault")
		if err != nil || *a.LastUserAction.Status != account.ActionFailure {
			t.Fatalf("failed vault account = %+v, %v", a, err)
		}

		r := h.do("POST", "/development/accounts/link", map[string]any{"external_user_id": "u3", "merchant_id": 1,
			"vault": map[string]any{}, "card_switcher": true, "card_id": "c"}, nil)
		if r.status != 400 || r.errorBody(t).Code != "INVALID_FIELD" {
			t.Fatalf("vault with card_switcher: %d %s", r.status, r.body)
		}
	}, withWorkers)
}

// In production a connector works the task: it lists it, claims its card
// once, and reports the result.
func TestCardTaskConnector(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		ctx := context.Background()
		_, taskID, err := h.cards.Authenticate(ctx, account.LinkParams{ClientID: h.clientID, ExternalUserID: "u1",
			MerchantID: 1, Product: "card_switcher", CardID: ptr("card-1")}, false)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := h.api.SubmitCard(ctx, &client.SubmitCardRequest{JWE: h.encrypt(t, goodCard("4242424242424242")), TaskID: &taskID}); err != nil {
			t.Fatal(err)
		}
		conn := h.newConnector(t)
		call := func(method, path string, body any) *response {
			return h.do(method, path, body, http.Header{"Authorization": {basic(conn.ID, conn.Secret)}})
		}
		r := call("GET", "/internal/tasks?merchant_id=1", nil)
		var list struct {
			Tasks []struct {
				TaskID   int64  `json:"task_id"`
				ClientID string `json:"client_id"`
				Card     struct {
					Brand    string `json:"brand"`
					LastFour string `json:"last_four"`
				} `json:"card"`
			} `json:"tasks"`
		}
		if err := json.Unmarshal(r.body, &list); r.status != 200 || err != nil || len(list.Tasks) != 1 ||
			list.Tasks[0].TaskID != taskID || list.Tasks[0].Card.LastFour != "4242" || list.Tasks[0].Card.Brand != "visa" {
			t.Fatalf("pending tasks: %d %s", r.status, r.body)
		}
		path := "/internal/tasks/" + strconv.FormatInt(taskID, 10)
		r = call("POST", path+"/claim", map[string]any{"client_id": h.clientID})
		var claimed struct {
			Card struct {
				Number string  `json:"number"`
				CVV    *string `json:"cvv"`
			} `json:"card"`
		}
		if err := json.Unmarshal(r.body, &claimed); r.status != 200 || err != nil ||
			claimed.Card.Number != "4242424242424242" || claimed.Card.CVV == nil || *claimed.Card.CVV != "123" {
			t.Fatalf("claim: %d", r.status)
		}
		if r.header.Get("Cache-Control") != "no-store" {
			t.Fatalf("claim Cache-Control = %q", r.header.Get("Cache-Control"))
		}
		// The card is released once.
		if r := call("POST", path+"/claim", map[string]any{"client_id": h.clientID}); r.status != 409 {
			t.Fatalf("second claim: %d %s", r.status, r.body)
		}
		if r := call("GET", "/internal/tasks", nil); r.status != 200 || strings.Contains(string(r.body), strconv.FormatInt(taskID, 10)) {
			t.Fatalf("a claimed task is still listed: %s", r.body)
		}
		if r := call("POST", path+"/result", map[string]any{"client_id": h.clientID, "status": "failed", "reason": "nope"}); r.status != 400 {
			t.Fatalf("unknown reason: %d %s", r.status, r.body)
		}
		if r := call("POST", path+"/result", map[string]any{"client_id": h.clientID, "status": "succeeded",
			"payment_method": map[string]any{"brand": "visa", "last_four": "4242", "expiration": "12/2031"}}); r.status != 400 {
			t.Fatalf("a card switch result with a payment method: %d %s", r.status, r.body)
		}
		if r := call("POST", path+"/result", map[string]any{"client_id": "someone-else", "status": "succeeded"}); r.status != 404 {
			t.Fatalf("result for an unknown developer: %d %s", r.status, r.body)
		}
		if r := call("POST", path+"/result", map[string]any{"client_id": h.clientID, "status": "succeeded"}); r.status != 200 {
			t.Fatalf("result: %d %s", r.status, r.body)
		}
		h.waitEvent(t, h.clientID, "CARD_UPDATED", taskID)
		if r := call("POST", path+"/result", map[string]any{"client_id": h.clientID, "status": "succeeded"}); r.status != 409 {
			t.Fatalf("second result: %d %s", r.status, r.body)
		}
		// A vault task has no card; its result brings the card on file.
		_, vaultID, err := h.cards.Authenticate(ctx, account.LinkParams{ClientID: h.clientID, ExternalUserID: "u2",
			MerchantID: 1, Product: "vault"}, false)
		if err != nil {
			t.Fatal(err)
		}
		vpath := "/internal/tasks/" + strconv.FormatInt(vaultID, 10)
		if r := call("POST", vpath+"/claim", map[string]any{"client_id": h.clientID}); r.status != 200 || !strings.Contains(string(r.body), `"card":null`) {
			t.Fatalf("vault claim: %d %s", r.status, r.body)
		}
		if r := call("POST", vpath+"/result", map[string]any{"client_id": h.clientID, "status": "succeeded"}); r.status != 400 {
			t.Fatalf("vault success without its card: %d %s", r.status, r.body)
		}
		if r := call("POST", vpath+"/result", map[string]any{"client_id": h.clientID, "status": "succeeded",
			"payment_method": map[string]any{"brand": "amex", "last_four": "0005", "expiration": "03/2030"}}); r.status != 200 {
			t.Fatalf("vault result: %d %s", r.status, r.body)
		}
		vaulted := h.waitEvent(t, h.clientID, "VAULTING_SUCCEEDED", vaultID)
		if pm := vaulted.Data["payment_method"].(map[string]any); pm["brand"] != "amex" || pm["last_four"] != "0005" || pm["expiration"] != "03/2030" {
			t.Fatalf("VAULTING_SUCCEEDED data = %v", vaulted.Data)
		}

		// The developer's own credentials do not open the internal API.
		if r := h.do("GET", "/internal/tasks", nil, nil); r.status != 401 {
			t.Fatalf("developer credentials on /internal/tasks: %d", r.status)
		}
	}, production)
}

// After a rotation GET /jwe/key serves the new key, GET /jwe/keys both, and
// card data under the old key decrypts until its grace period is over.
func TestJWEKeyRotation(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		ctx := context.Background()
		old, err := h.api.JWEKey(ctx)
		if err != nil {
			t.Fatal(err)
		}
		oldJWE := func() string {
			jwe, err := client.EncryptCard(old, goodCard("4242424242424242"))
			if err != nil {
				t.Fatal(err)
			}
			return jwe
		}
		if _, err := h.keys.Rotate(ctx, card.KeyBits, time.Hour); err != nil {
			t.Fatal(err)
		}
		current, err := h.api.JWEKey(ctx)
		if err != nil || current.Kid == old.Kid {
			t.Fatalf("after rotating, /jwe/key = %+v, %v", current, err)
		}
		keys, err := h.api.JWEKeys(ctx)
		if err != nil || len(keys) != 2 || keys[0].Kid != current.Kid || keys[1].Kid != old.Kid {
			t.Fatalf("/jwe/keys = %+v, %v", keys, err)
		}
		auth := h.authenticated(t, "u1", 1, "card-1", nil)
		if _, err := h.api.SubmitCard(ctx, &client.SubmitCardRequest{JWE: oldJWE(), TaskID: auth.TaskID}); err != nil {
			t.Fatalf("a JWE under the rotated-out key within its grace: %v", err)
		}

		h.clock.Advance(time.Hour)
		keys, err = h.api.JWEKeys(ctx)
		if err != nil || len(keys) != 1 || keys[0].Kid != current.Kid {
			t.Fatalf("/jwe/keys after the grace period = %+v, %v", keys, err)
		}
		auth = h.authenticated(t, "u2", 1, "card-2", nil)
		_, err = h.api.SubmitCard(ctx, &client.SubmitCardRequest{JWE: oldJWE(), TaskID: auth.TaskID})
		if e := expectError(t, err, 400, "INVALID_REQUEST", "INVALID_JWE"); !strings.Contains(e.Message, "retired") {
			t.Fatalf("retired key: %q", e.Message)
		}
	})
}
