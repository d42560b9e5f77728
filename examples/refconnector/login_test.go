package refconnector

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/hitchdev/hitch/connector"
	"github.com/hitchdev/hitch/connector/browser"
)

// asked records the challenges of a login.
type asked struct {
	mu    sync.Mutex
	kinds []string
	retry []bool
	quest []string
}

func (a *asked) add(kind, question string, retry bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.kinds, a.quest, a.retry = append(a.kinds, kind), append(a.quest, question), append(a.retry, retry)
}

// wrongCode is a six-digit code other than code.
func wrongCode(code string) string {
	n, _ := strconv.Atoi(code)
	return fmt.Sprintf("%06d", (n+1)%1000000)
}

// TestLogin signs in through the shop's pages in Chromium: a plain
// password, an e-mailed code (a wrong one first, then the one read from
// the shop's mailbox), a security question, and each refusal mapped to
// its reason.
func TestLogin(t *testing.T) {
	t.Parallel()
	pool := sharedPool(t)
	tests := []struct {
		name, email, password string
		// answer gives the answer to the nth challenge.
		answer     func(s *shop, n int, kind, question string) (string, error)
		wantReason string // "" for a successful login
		wantKinds  []string
		wantRetry  []bool
		wantQuest  string
	}{
		{name: "password only", email: ada, password: demoPassword},
		{
			name: "e-mailed code, a wrong one first", email: "otp@refshop.example", password: demoPassword,
			answer: func(s *shop, n int, kind, question string) (string, error) {
				code, err := s.mailedCode("otp@refshop.example")
				if n == 0 {
					return wrongCode(code), err
				}
				return code, err
			},
			wantKinds: []string{connector.ChallengeOTP, connector.ChallengeOTP}, wantRetry: []bool{false, true},
		},
		{
			name: "wrong codes until too many attempts", email: "otp@refshop.example", password: demoPassword,
			answer: func(s *shop, n int, kind, question string) (string, error) {
				code, err := s.mailedCode("otp@refshop.example")
				return wrongCode(code), err
			},
			wantReason: "too many attempts",
			wantKinds:  []string{connector.ChallengeOTP, connector.ChallengeOTP, connector.ChallengeOTP},
			wantRetry:  []bool{false, true, true},
		},
		{
			name: "security question", email: "quiz@refshop.example", password: demoPassword,
			answer: func(s *shop, n int, kind, question string) (string, error) {
				if n == 0 {
					return "Fido", nil
				}
				return "Rex", nil
			},
			wantKinds: []string{connector.ChallengeQuestion, connector.ChallengeQuestion}, wantRetry: []bool{false, true},
			wantQuest: "What was the name of your first pet?",
		},
		{
			name: "a code the form refuses, then the mailed one", email: "otp@refshop.example", password: demoPassword,
			answer: func(s *shop, n int, kind, question string) (string, error) {
				if n == 0 {
					return "12345", nil // five digits: the browser does not send it
				}
				return s.mailedCode("otp@refshop.example")
			},
			wantKinds: []string{connector.ChallengeOTP, connector.ChallengeOTP}, wantRetry: []bool{false, true},
		},
		{name: "user name that is no e-mail address", email: "ada", password: demoPassword, wantReason: "credentials"},
		{name: "wrong password", email: ada, password: "not-the-password", wantReason: "credentials"},
		{name: "unknown e-mail", email: "nobody@refshop.example", password: demoPassword, wantReason: "credentials"},
		{name: "locked account", email: "locked@refshop.example", password: demoPassword, wantReason: "account"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := newShop(t) // a mailbox of the test's own
			site := New(s.URL)
			var got asked
			ask := noAsk(t)
			if tt.answer != nil {
				ask = func(ctx context.Context, kind, question string, retry bool) (string, error) {
					got.add(kind, question, retry)
					return tt.answer(s, len(got.kinds)-1, kind, question)
				}
			}
			state, err := login(t, pool, site, tt.email, tt.password, ask)
			var failure *connector.Failure
			switch {
			case tt.wantReason == "" && err != nil:
				t.Fatalf("login: %v", err)
			case tt.wantReason != "" && !errors.As(err, &failure):
				t.Fatalf("login: %v, want a failure %q", err, tt.wantReason)
			case tt.wantReason != "" && failure.Reason != tt.wantReason:
				t.Fatalf("login failed with reason %q, want %q", failure.Reason, tt.wantReason)
			}
			if err != nil && strings.Contains(err.Error(), tt.password) {
				t.Errorf("the error %q shows the password", err)
			}
			if !slices.Equal(got.kinds, tt.wantKinds) || !slices.Equal(got.retry, tt.wantRetry) {
				t.Errorf("asked %v with retry %v, want %v with %v", got.kinds, got.retry, tt.wantKinds, tt.wantRetry)
			}
			for _, q := range got.quest {
				if q != tt.wantQuest && !(q == "" && tt.wantQuest == "") {
					t.Errorf("asked the question %q, want %q", q, tt.wantQuest)
				}
			}
			if tt.wantReason != "" {
				return
			}
			// The saved session is signed in: the account page opens.
			inSession(t, pool, state, func(ctx context.Context, sess *browser.Session) {
				if err := site.open(ctx, sess, "account", site.url("/account")); err != nil {
					t.Fatalf("the saved session does not open the account page: %v", err)
				}
			})
		})
	}
}
