package link_test

import (
	"context"
	"testing"

	"github.com/hitchdev/hitch/internal/link"
)

func attempt(product string) link.Attempt {
	return link.Attempt{Session: &link.Session{Product: product}}
}

// The test logins of docs/link.md, outcome by outcome.
func TestTestLogins(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tx := &link.Transactions{New: true}
	txUpdated := &link.Transactions{New: true, Updated: true}
	tests := []struct {
		product, username, password string
		status                      link.Status
		reason                      string
		transactions                *link.Transactions
	}{
		{"card_switcher", "user_good", "pass_good", link.StatusSuccess, "", nil},
		{"transaction_link", "user_good", "pass_good", link.StatusSuccess, "", nil},
		{"transaction_link", "user_good_transactions", "pass_good", link.StatusSuccess, "", tx},
		{"transaction_link", "user_good_transactions", "pass_good_updates", link.StatusSuccess, "", txUpdated},
		{"card_switcher", "user_good_transactions", "pass_good", link.StatusSuccess, "", nil},
		{"vault", "user_good_vault", "pass_good", link.StatusSuccess, "", nil},
		{"vault", "user_good", "pass_otp", link.StatusOTPRequired, "", nil},
		{"vault", "user_good", "pass_questions", link.StatusQuestionsRequired, "", nil},
		{"vault", "user_good", "credentials", link.StatusFailed, "credentials", nil},
		{"vault", "anyone", "account", link.StatusFailed, "account", nil},
		{"vault", "anyone", "too many attempts", link.StatusFailed, "too many attempts", nil},
		{"vault", "anyone", "pass_good", link.StatusFailed, "credentials", nil},
		{"vault", "user_good", "Pass_Good", link.StatusFailed, "credentials", nil},
	}
	for _, tc := range tests {
		step, err := link.TestLogins{}.Login(ctx, attempt(tc.product), link.Credentials{Username: tc.username, Password: tc.password})
		if err != nil {
			t.Fatal(err)
		}
		if step.Status != tc.status || step.Reason != tc.reason || !sameTransactions(step.Transactions, tc.transactions) {
			t.Errorf("%s %s/%s: %+v, want %s %q %+v", tc.product, tc.username, tc.password, step, tc.status, tc.reason, tc.transactions)
		}
	}
}

func sameTransactions(a, b *link.Transactions) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// A code or question answers with the state of the step that asked it;
// the plan of the login (transactions) survives the step.
func TestTestLoginsAnswers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a := attempt("transaction_link")
	otp, err := link.TestLogins{}.Login(ctx, a, link.Credentials{Username: "user_good_transactions", Password: "pass_otp"})
	if err != nil || otp.Status != link.StatusOTPRequired {
		t.Fatalf("pass_otp: %+v %v", otp, err)
	}
	for answer, ok := range map[string]bool{"1234": true, " 1234 ": true, "0000": false, "answer_good": false} {
		step, err := link.TestLogins{}.Answer(ctx, a, otp.State, answer)
		if err != nil {
			t.Fatal(err)
		}
		if ok != (step.Status == link.StatusSuccess) || ok == step.Wrong {
			t.Errorf("code %q: %+v", answer, step)
		}
		if ok && !sameTransactions(step.Transactions, &link.Transactions{New: true}) {
			t.Errorf("code %q lost the login's transactions: %+v", answer, step.Transactions)
		}
	}
	q, err := link.TestLogins{}.Login(ctx, a, link.Credentials{Username: "user_good", Password: "pass_questions"})
	if err != nil || q.Question == "" {
		t.Fatalf("pass_questions: %+v %v", q, err)
	}
	for answer, ok := range map[string]bool{"answer_good": true, "ANSWER_GOOD": true, "1234": false} {
		step, err := link.TestLogins{}.Answer(ctx, a, q.State, answer)
		if err != nil || ok != (step.Status == link.StatusSuccess) {
			t.Errorf("answer %q: %+v %v", answer, step, err)
		}
	}
}

// Production has no login to fake.
func TestUnavailable(t *testing.T) {
	t.Parallel()
	step, err := link.Unavailable{}.Login(context.Background(), attempt("card_switcher"), link.Credentials{Username: "user_good", Password: "pass_good"})
	if err != nil || step.Status != link.StatusUnavailable {
		t.Fatalf("%+v %v", step, err)
	}
	step, err = link.Unavailable{}.Answer(context.Background(), attempt("card_switcher"), nil, "1234")
	if err != nil || step.Status != link.StatusUnavailable {
		t.Fatalf("%+v %v", step, err)
	}
}

func TestAuthenticatorFor(t *testing.T) {
	if _, ok := link.AuthenticatorFor("development").(link.TestLogins); !ok {
		t.Error("development does not use the test logins")
	}
	for _, env := range []string{"production", "", "staging"} {
		if _, ok := link.AuthenticatorFor(env).(link.Unavailable); !ok {
			t.Errorf("%q does not refuse logins", env)
		}
	}
}
