package link

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// The test logins of development (docs/link.md).
const (
	TestUser             = "user_good"
	TestUserTransactions = "user_good_transactions"
	TestUserVault        = "user_good_vault"
	TestPassword         = "pass_good"
	TestPasswordUpdates  = "pass_good_updates"
	TestPasswordOTP      = "pass_otp"
	TestPasswordQuestion = "pass_questions"
	TestOTP              = "1234"
	TestAnswer           = "answer_good"
	// TestQuestion is the security question of pass_questions.
	TestQuestion = "What was the name of your first pet?"
)

var testUsers = []string{TestUser, TestUserTransactions, TestUserVault}

// TestLogins is the development Authenticator. Nothing is checked at a
// merchant: the credentials only choose the outcome, and are dropped.
//
//   - a password named after a failure reason ("credentials", "account",
//     "too many attempts") fails that way, whatever the username;
//   - otherwise the username must be user_good, user_good_transactions or
//     user_good_vault, and the password pass_good (success), pass_otp (a
//     code: 1234 is right), pass_questions (a question: answer_good is
//     right), or, for transactions, pass_good_updates;
//   - anything else fails as wrong credentials.
//
// In a transaction_link session, user_good_transactions generates
// transactions, and pass_good_updates also updates three of them.
type TestLogins struct{}

// testState is TestLogins' state between steps.
type testState struct {
	Kind         string        `json:"kind"` // "otp" or "question"
	Transactions *Transactions `json:"transactions,omitempty"`
}

// Login implements Authenticator.
func (TestLogins) Login(_ context.Context, a Attempt, c Credentials) (Step, error) {
	switch c.Password {
	case ReasonCredentials, ReasonAccount, ReasonTooManyAttempts:
		return Step{Status: StatusFailed, Reason: c.Password}, nil
	}
	if !slices.Contains(testUsers, c.Username) {
		return Step{Status: StatusFailed, Reason: ReasonCredentials}, nil
	}
	tx := testTransactions(a, c.Username, c.Password == TestPasswordUpdates)
	switch c.Password {
	case TestPassword, TestPasswordUpdates:
		return Step{Status: StatusSuccess, Transactions: tx}, nil
	case TestPasswordOTP:
		state, err := json.Marshal(testState{Kind: "otp", Transactions: tx})
		return Step{Status: StatusOTPRequired, State: state}, err
	case TestPasswordQuestion:
		state, err := json.Marshal(testState{Kind: "question", Transactions: tx})
		return Step{Status: StatusQuestionsRequired, Question: TestQuestion, State: state}, err
	}
	return Step{Status: StatusFailed, Reason: ReasonCredentials}, nil
}

// Answer implements Authenticator.
func (TestLogins) Answer(_ context.Context, _ Attempt, state []byte, answer string) (Step, error) {
	var st testState
	if err := json.Unmarshal(state, &st); err != nil {
		return Step{}, fmt.Errorf("link: test login state: %w", err)
	}
	answer = strings.TrimSpace(answer)
	switch {
	case st.Kind == "otp" && answer == TestOTP,
		st.Kind == "question" && strings.EqualFold(answer, TestAnswer):
		return Step{Status: StatusSuccess, Transactions: st.Transactions}, nil
	}
	return Step{Wrong: true}, nil
}

// testTransactions is what a test login generates in a transaction_link
// session: transactions for user_good_transactions, updated ones too with
// pass_good_updates.
func testTransactions(a Attempt, username string, updated bool) *Transactions {
	if a.Session.Product != productTransactionLink || username != TestUserTransactions {
		return nil
	}
	return &Transactions{New: true, Updated: updated}
}

// Unavailable is the production Authenticator until a connector completes
// logins: it fakes nothing and says logins are not available.
type Unavailable struct{}

// Login implements Authenticator.
func (Unavailable) Login(context.Context, Attempt, Credentials) (Step, error) {
	return Step{Status: StatusUnavailable}, nil
}

// Answer implements Authenticator.
func (Unavailable) Answer(context.Context, Attempt, []byte, string) (Step, error) {
	return Step{Status: StatusUnavailable}, nil
}

// AuthenticatorFor is the Authenticator of an environment: the test logins
// in development; in production a connector's, and until one is wired,
// Unavailable, so that nothing fakes a login there (docs/link.md).
func AuthenticatorFor(environment string) Authenticator {
	if environment == "development" {
		return TestLogins{}
	}
	return Unavailable{}
}
