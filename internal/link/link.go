// Package link is the domain of the hosted link flow: it opens the session
// an SDK was started with, lists the merchants that session may link, logs
// the user in at a merchant through an Authenticator, and links the account
// after a successful login. POST /development/accounts/link links through
// the same Link, so a simulated link and a login in the flow have the same
// effects and raise the same events.
//
// Credentials pass through Login to the Authenticator and are never stored
// or logged. In development the Authenticator is TestLogins, where they only
// choose the simulated outcome; in production it is a connector's (none is
// built in: Unavailable says so instead of faking success).
package link

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/hitchdev/hitch/internal/account"
	"github.com/hitchdev/hitch/internal/card"
	"github.com/hitchdev/hitch/internal/developer"
	"github.com/hitchdev/hitch/internal/merchant"
	"github.com/hitchdev/hitch/internal/seal"
	"github.com/hitchdev/hitch/internal/session"
	"github.com/hitchdev/hitch/internal/simulate"
	"github.com/hitchdev/hitch/internal/store"
	"github.com/hitchdev/hitch/internal/transaction"
)

// Products, as spelled on the wire.
const (
	productCardSwitcher    = "card_switcher"
	productTransactionLink = "transaction_link"
	productVault           = "vault"
)

const (
	// ChallengeLifetime is how long an OTP or security question may be
	// answered after the login that asked it.
	ChallengeLifetime = 10 * time.Minute
	// MaxAnswerAttempts is how many wrong answers end a login ("too many
	// attempts").
	MaxAnswerAttempts = 3
	// MaxLoginFailures is how many logins with wrong credentials a session
	// allows; later logins fail with "too many attempts" without reaching
	// the authenticator, whatever IP they come from.
	MaxLoginFailures = 10
)

var (
	// ErrClientNotFound: no developer of this deployment's environment has
	// the client_id the SDK was opened with.
	ErrClientNotFound = errors.New("link: client_id not found")
	// ErrChallenge: the challenge is malformed, of another session, or
	// expired; the user must log in again.
	ErrChallenge = errors.New("link: the challenge is invalid or expired")
)

// Service runs the hosted flow's logins and links accounts.
type Service struct {
	cfg Config
	// frames keeps each developer's frame-ancestors for a short while, so
	// that loading /link costs no database read each time.
	frames *frameCache
}

// Config is what the Service is built from.
type Config struct {
	// Environment is the deployment's: development or production.
	Environment string
	Sessions    *session.Service
	Developers  *developer.Service
	Accounts    *account.Service
	Cards       *card.Service
	// Simulator generates the transactions of a development link.
	Simulator *simulate.Connector
	Catalog   *merchant.Catalog
	// Store keeps the merchants each developer hides from the flow.
	Store store.Store
	// Box seals the challenges handed to the browser between login steps.
	Box *seal.Box
	// Authenticator completes logins: TestLogins in development, a
	// connector's in production (Unavailable until there is one).
	Authenticator Authenticator
	Now           func() time.Time
}

// NewService returns a Service.
func NewService(cfg Config) *Service { return &Service{cfg: cfg, frames: newFrameCache()} }

// Params describe a successful login to link.
type Params struct {
	ClientID       string
	ExternalUserID string
	MerchantID     int64
	// Product is card_switcher, transaction_link, vault or link.
	Product    string
	CardID     *string
	SessionID  *string
	EntryPoint *string
	Metadata   map[string]string
	// Transactions, in development, has the simulator feed the account the
	// next page of its history after the link (transaction_link only).
	Transactions *Transactions
	// VaultFails makes a development vaulting fail.
	VaultFails bool
}

// Transactions is what a development link generates: New adds the last two
// years of the account's simulated history (NEW_TRANSACTIONS_AVAILABLE); Updated also changes 3 of them
// (UPDATED_TRANSACTIONS_AVAILABLE).
type Transactions struct {
	New     bool `json:"new"`
	Updated bool `json:"updated"`
}

// Linked is what a link did.
type Linked struct {
	Account *account.Account
	// TaskID is the card switch or vaulting task the login opened (0 for
	// none); AUTHENTICATED carries it.
	TaskID int64
}

// Link links the user's account at a merchant after a successful login:
// the account, its lifecycle and AUTHENTICATED (with the session id and the
// metadata) in one transaction; for the card switcher and the vault the
// task too; then, in development, the simulated transactions.
func (s *Service) Link(ctx context.Context, p Params) (*Linked, error) {
	if p.Transactions != nil && p.Product != productTransactionLink {
		return nil, fmt.Errorf("link: transactions are for transaction_link, not %q", p.Product)
	}
	lp := account.LinkParams{
		ClientID:       p.ClientID,
		ExternalUserID: p.ExternalUserID,
		MerchantID:     p.MerchantID,
		Product:        p.Product,
		CardID:         p.CardID,
		SessionID:      p.SessionID,
		EntryPoint:     p.EntryPoint,
		Metadata:       p.Metadata,
	}
	out := &Linked{}
	var err error
	switch p.Product {
	case productCardSwitcher, productVault:
		out.Account, out.TaskID, err = s.cfg.Cards.Authenticate(ctx, lp, p.VaultFails)
	default:
		out.Account, _, err = s.cfg.Accounts.Link(ctx, lp)
	}
	if err != nil {
		return nil, err
	}
	if p.Transactions != nil && p.Transactions.New {
		if s.cfg.Simulator == nil {
			return nil, errors.New("link: transactions need the development simulator")
		}
		key := transaction.AccountKey{ClientID: p.ClientID, ExternalUserID: p.ExternalUserID, MerchantID: p.MerchantID}
		if err := s.cfg.Simulator.Run(ctx, key, p.Transactions.Updated); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Session is a live session as the hosted flow sees it. It never holds the
// session value.
type Session struct {
	ID             string
	ClientID       string
	ExternalUserID string
	// Product is the session's type.
	Product    string
	CardID     *string
	MerchantID *int64
	Metadata   map[string]string
	ExpiresAt  time.Time
}

// Open returns the live session the developer clientID issued with value.
// Errors: session.ErrNotFound, session.ErrExpired, ErrClientNotFound (the
// client_id itself is unknown here, which the SDK reports apart).
func (s *Service) Open(ctx context.Context, clientID, value string) (*Session, error) {
	// The client first: a session of another environment's developer (both
	// can share a database) opens nothing here, or a development deployment
	// would link a production developer's account on a test login.
	c, err := s.cfg.Developers.Get(ctx, clientID)
	switch {
	case errors.Is(err, developer.ErrNotFound) || (err == nil && c.Environment != s.cfg.Environment):
		return nil, ErrClientNotFound
	case err != nil:
		return nil, err
	}
	sess, err := s.cfg.Sessions.Lookup(ctx, clientID, value)
	if err != nil {
		return nil, err
	}
	out := &Session{ID: sess.ID, ClientID: sess.ClientID, ExternalUserID: sess.ExternalUserID, Product: sess.Type,
		CardID: sess.CardID, MerchantID: sess.MerchantID, ExpiresAt: sess.ExpiresAt}
	if len(sess.Metadata) > 0 {
		if err := json.Unmarshal(sess.Metadata, &out.Metadata); err != nil {
			return nil, fmt.Errorf("link: session metadata: %w", err)
		}
	}
	return out, nil
}

// Merchants lists the merchants the session can link whose name or an alias
// matches search, ordered by name (merchant.Catalog.List's rules), without
// those the developer hides.
func (s *Service) Merchants(ctx context.Context, sess *Session, search string) ([]*merchant.Merchant, error) {
	hidden, err := s.Hidden(ctx, sess.ClientID)
	if err != nil {
		return nil, err
	}
	all := s.cfg.Catalog.List(sess.Product, search)
	out := make([]*merchant.Merchant, 0, len(all))
	for _, m := range all {
		if !hidden[m.ID] {
			out = append(out, m)
		}
	}
	return out, nil
}

// Hidden returns the ids of the merchants the developer hides from its
// users in the flow.
func (s *Service) Hidden(ctx context.Context, clientID string) (map[int64]bool, error) {
	return s.cfg.Store.MerchantHiddenList(ctx, clientID)
}

// SetHidden hides a catalog merchant from the developer's flow, or shows it
// again; also runs in the same transaction (the dashboard's audit record).
func (s *Service) SetHidden(ctx context.Context, clientID string, merchantID int64, hidden bool, also ...func(store.Executor) error) error {
	if _, ok := s.cfg.Catalog.Get(merchantID); !ok {
		return account.ErrUnknownMerchant
	}
	return s.cfg.Store.InTx(ctx, func(ex store.Executor) error {
		var err error
		if hidden {
			err = ex.MerchantHide(ctx, clientID, merchantID, s.cfg.Now().UTC())
		} else {
			err = ex.MerchantShow(ctx, clientID, merchantID)
		}
		if err != nil {
			return err
		}
		for _, fn := range also {
			if err := fn(ex); err != nil {
				return err
			}
		}
		return nil
	})
}

// Status is where a login stands.
type Status string

// Login statuses.
const (
	StatusSuccess           Status = "success"
	StatusOTPRequired       Status = "otp_required"
	StatusQuestionsRequired Status = "questions_required"
	StatusFailed            Status = "failed"
	// StatusUnavailable: nothing on this deployment can log in at the
	// merchant (production without a connector).
	StatusUnavailable Status = "unavailable"
	// StatusPending: a connector is still working on the login (or it
	// waits for one); the flow waits again with the challenge.
	StatusPending Status = "pending"
)

// Failure reasons, the public service's.
const (
	ReasonCredentials     = "credentials"
	ReasonAccount         = "account"
	ReasonTooManyAttempts = "too many attempts"
)

// Credentials are what the user typed. They are handed to the
// Authenticator and dropped: never stored, never logged.
type Credentials struct {
	Username string
	Password string
}

// Attempt is one login at a merchant for a session.
type Attempt struct {
	Session  *Session
	Merchant *merchant.Merchant
}

// Step is an Authenticator's answer to a login or to an answered challenge.
type Step struct {
	Status Status
	// Reason says why a login failed.
	Reason string
	// Question is the security question of StatusQuestionsRequired.
	Question string
	// Wrong marks a challenge answered wrongly: it still stands.
	Wrong bool
	// State is the Authenticator's own state between steps (opaque to the
	// Service, which seals it into the challenge the browser holds).
	State []byte
	// Transactions, on success in development, is what the link generates.
	Transactions *Transactions
	// work is the connector login a Routed success came from.
	work string
}

// Continuer is an Authenticator whose steps may take longer than one
// request: Continue waits again for a login its last step left pending.
type Continuer interface {
	Continue(ctx context.Context, a Attempt, state []byte) (Step, error)
}

// Authenticator logs users in at merchants. It is the seam a production
// connector plugs into (docs/link.md).
type Authenticator interface {
	// Login tries credentials. It may succeed, fail, or ask for a one-time
	// code or a security answer, returning State for Answer.
	Login(ctx context.Context, a Attempt, c Credentials) (Step, error)
	// Answer continues a login with the answer to the code or question
	// that Login (or an earlier Answer) asked, given that step's State.
	Answer(ctx context.Context, a Attempt, state []byte, answer string) (Step, error)
}

// LoginParams are a login in the hosted flow.
type LoginParams struct {
	Session     *Session
	MerchantID  int64
	Credentials Credentials
	// EntryPoint is the SDK's entryPoint, echoed in AUTHENTICATED.
	EntryPoint *string
	// Metadata is the SDK's metadata option, merged into the session's
	// for the events of the link (MergeMetadata).
	Metadata map[string]string
}

// AnswerParams answer the challenge of an earlier step.
type AnswerParams struct {
	Session    *Session
	Challenge  string
	Answer     string
	EntryPoint *string
	Metadata   map[string]string
}

// Result is where a login stands after a step.
type Result struct {
	Status   Status
	Merchant *merchant.Merchant
	Reason   string
	Question string
	// Retry: the user may try again (wrong credentials).
	Retry bool
	// Wrong: the code or answer was wrong; Challenge is still to answer.
	Wrong bool
	// Challenge is the sealed state to send back with the answer.
	Challenge string
	// AttemptsLeft is how many wrong answers are still allowed.
	AttemptsLeft int
	// Linked is the link a success made.
	Linked *Linked
}

// Login logs the session's user in at a merchant and, on success, links the
// account.
func (s *Service) Login(ctx context.Context, p LoginParams) (*Result, error) {
	m, err := s.merchantFor(ctx, p.Session, p.MerchantID)
	if err != nil {
		return nil, err
	}
	// The failure is counted before the authenticator is asked, and given
	// back unless the credentials were wrong: concurrent logins cannot all
	// slip under the limit.
	reserved, err := s.cfg.Store.SessionLoginFailureReserve(ctx, p.Session.ClientID, p.Session.ID, MaxLoginFailures)
	if err != nil {
		return nil, err
	}
	if !reserved {
		return &Result{Status: StatusFailed, Merchant: m, Reason: ReasonTooManyAttempts}, nil
	}
	if err := s.recordStep(ctx, p.Session, m, account.LifecycleLoginStarted, account.ActionPending); err != nil {
		return nil, err
	}
	step, err := s.cfg.Authenticator.Login(ctx, Attempt{Session: p.Session, Merchant: m}, p.Credentials)
	if err != nil || step.Status != StatusFailed || step.Reason != ReasonCredentials {
		if rerr := s.cfg.Store.SessionLoginFailureRelease(ctx, p.Session.ClientID, p.Session.ID); rerr != nil {
			return nil, errors.Join(err, rerr)
		}
	}
	if err != nil {
		return nil, err
	}
	return s.advance(ctx, p.Session, m, step, p.EntryPoint, p.Metadata)
}

// Answer answers the code or question of a challenge.
func (s *Service) Answer(ctx context.Context, p AnswerParams) (*Result, error) {
	c, err := s.openChallenge(p.Session, p.Challenge)
	if err != nil {
		return nil, err
	}
	if c.Status == StatusPending { // nothing was asked: Continue waits
		return nil, ErrChallenge
	}
	m, err := s.merchantFor(ctx, p.Session, c.MerchantID)
	if err != nil {
		return nil, err
	}
	// The count of answers is the server's: the sealed challenge names its
	// row, so handing an older copy back neither resets the count nor
	// answers twice.
	attempts, err := s.cfg.Store.LinkChallengeAttempt(ctx, p.Session.ClientID, c.ID, p.Session.ID, MaxAnswerAttempts, s.cfg.Now())
	if errors.Is(err, store.ErrNotFound) {
		return nil, ErrChallenge
	} else if err != nil {
		return nil, err
	}
	step, err := s.cfg.Authenticator.Answer(ctx, Attempt{Session: p.Session, Merchant: m}, c.State, p.Answer)
	if err != nil {
		return nil, err
	}
	if step.Wrong && attempts < MaxAnswerAttempts {
		return &Result{Status: c.Status, Merchant: m, Question: c.Question, Wrong: true, Challenge: p.Challenge,
			AttemptsLeft: MaxAnswerAttempts - attempts}, nil
	}
	// The right answer, or the last wrong one, spends the challenge; only
	// one concurrent answer can.
	if spent, err := s.cfg.Store.LinkChallengeSpend(ctx, p.Session.ClientID, c.ID); err != nil {
		return nil, err
	} else if !spent {
		return nil, ErrChallenge
	}
	if step.Wrong {
		if err := s.recordStep(ctx, p.Session, m, account.LifecycleLoginFailed, account.ActionFailure); err != nil {
			return nil, err
		}
		return &Result{Status: StatusFailed, Merchant: m, Reason: ReasonTooManyAttempts}, nil
	}
	return s.advance(ctx, p.Session, m, step, p.EntryPoint, p.Metadata)
}

// ContinueParams wait again for a pending login.
type ContinueParams struct {
	Session    *Session
	Challenge  string
	EntryPoint *string
	Metadata   map[string]string
}

// Continue waits again for a login that a connector was still working on:
// the challenge of a pending step is spent, and the next step has its own.
func (s *Service) Continue(ctx context.Context, p ContinueParams) (*Result, error) {
	c, err := s.openChallenge(p.Session, p.Challenge)
	if err != nil || c.Status != StatusPending {
		return nil, ErrChallenge
	}
	m, err := s.merchantFor(ctx, p.Session, c.MerchantID)
	if err != nil {
		return nil, err
	}
	cont, ok := s.cfg.Authenticator.(Continuer)
	if !ok {
		return nil, ErrChallenge
	}
	if spent, err := s.cfg.Store.LinkChallengeSpend(ctx, p.Session.ClientID, c.ID); err != nil {
		return nil, err
	} else if !spent {
		return nil, ErrChallenge
	}
	step, err := cont.Continue(ctx, Attempt{Session: p.Session, Merchant: m}, c.State)
	if err != nil {
		return nil, err
	}
	return s.advance(ctx, p.Session, m, step, p.EntryPoint, p.Metadata)
}

// advance turns an Authenticator's step into a Result, linking on success.
func (s *Service) advance(ctx context.Context, sess *Session, m *merchant.Merchant, step Step, entryPoint *string,
	sdkMetadata map[string]string) (*Result, error) {
	// Wrong comes here only from a continued wait: the answer given before
	// was refused, and a new challenge stands for the next one.
	res := &Result{Status: step.Status, Merchant: m, Reason: step.Reason, Wrong: step.Wrong}
	switch step.Status {
	case StatusSuccess:
		tx := step.Transactions
		if sess.Product != productTransactionLink {
			tx = nil
		}
		linked, err := s.Link(ctx, Params{
			ClientID:       sess.ClientID,
			ExternalUserID: sess.ExternalUserID,
			MerchantID:     m.ID,
			Product:        sess.Product,
			CardID:         sess.CardID,
			SessionID:      &sess.ID,
			EntryPoint:     entryPoint,
			Metadata:       MergeMetadata(sess.Metadata, sdkMetadata),
			Transactions:   tx,
		})
		if err != nil {
			return nil, err
		}
		res.Linked = linked
		if r, ok := s.cfg.Authenticator.(*Routed); ok {
			if err := r.Linked(ctx, Attempt{Session: sess, Merchant: m}, step); err != nil {
				return nil, err
			}
		}
	case StatusOTPRequired, StatusQuestionsRequired, StatusPending:
		now := s.cfg.Now()
		c := &challenge{ID: newChallengeID(), MerchantID: m.ID, Status: step.Status, Question: step.Question,
			ExpiresAt: now.Add(ChallengeLifetime), State: step.State}
		if err := s.cfg.Store.LinkChallengeInsert(ctx, &store.LinkChallenge{ID: c.ID, ClientID: sess.ClientID,
			SessionID: sess.ID, ExpiresAt: c.ExpiresAt, CreatedAt: now}); err != nil {
			return nil, err
		}
		sealed, err := s.sealChallenge(sess, c)
		if err != nil {
			return nil, err
		}
		res.Question, res.Challenge = step.Question, sealed
		if step.Status != StatusPending {
			res.AttemptsLeft = MaxAnswerAttempts
		}
		if lifecycle := challengeLifecycle[step.Status]; lifecycle != "" && !step.Wrong {
			if err := s.recordStep(ctx, sess, m, lifecycle, account.ActionPending); err != nil {
				return nil, err
			}
		}
	case StatusFailed:
		res.Retry = step.Reason == ReasonCredentials || step.Reason == ReasonInterrupted
		// The user may have left: the failure is recorded all the same.
		if err := s.recordStep(context.WithoutCancel(ctx), sess, m, account.LifecycleLoginFailed, account.ActionFailure); err != nil {
			return nil, err
		}
	case StatusUnavailable:
	default:
		return nil, fmt.Errorf("link: the authenticator answered an unknown status %q", step.Status)
	}
	return res, nil
}

// challengeLifecycle is the lifecycle status of a step that asks the user.
var challengeLifecycle = map[Status]string{
	StatusOTPRequired:       account.LifecycleOTPRequired,
	StatusQuestionsRequired: account.LifecycleQuestionsRequired,
}

// recordStep records a login step in the lifecycle of the session's
// product at the merchant, whichever authenticator logs the user in (the
// simulator or a connector), when the user has an account there already;
// a first login's success is recorded when it links (authenticated).
func (s *Service) recordStep(ctx context.Context, sess *Session, m *merchant.Merchant, status, action string) error {
	return s.cfg.Accounts.RecordLoginStep(ctx, sess.ClientID, sess.ExternalUserID, m.ID, sess.Product, status, action)
}

// MergeMetadata is the metadata of a link made in the hosted flow: the
// SDK's (given to open by the developer's page) and the session's (given
// to POST /session/create by the developer's backend). A key both name
// keeps the session's value: the page runs in the user's browser, which
// can change what it sends; the backend's word is the one to trust. nil
// when neither has a key.
func MergeMetadata(session, sdk map[string]string) map[string]string {
	if len(session)+len(sdk) == 0 {
		return nil
	}
	out := make(map[string]string, len(session)+len(sdk))
	maps.Copy(out, sdk)
	maps.Copy(out, session)
	return out
}

// merchantFor returns a merchant that the session can link. A merchant the
// developer hides is as unknown as one outside the catalog.
func (s *Service) merchantFor(ctx context.Context, sess *Session, id int64) (*merchant.Merchant, error) {
	m, ok := s.cfg.Catalog.Get(id)
	if !ok {
		return nil, account.ErrUnknownMerchant
	}
	hidden, err := s.Hidden(ctx, sess.ClientID)
	if err != nil {
		return nil, err
	}
	if hidden[id] {
		return nil, account.ErrUnknownMerchant
	}
	if !m.Supports(sess.Product) {
		return nil, account.ErrMerchantUnsupported
	}
	return m, nil
}

// challenge is the state of a login between steps. The browser holds it
// sealed under the master key, bound to the session, so it can be neither
// read nor forged; it never holds credentials.
type challenge struct {
	// ID names the challenge's row, which counts its answers.
	ID         string    `json:"id"`
	MerchantID int64     `json:"merchant_id"`
	Status     Status    `json:"status"`
	Question   string    `json:"question,omitempty"`
	ExpiresAt  time.Time `json:"expires_at"`
	State      []byte    `json:"state,omitempty"`
}

// newChallengeID returns 128 random bits, base64url.
func newChallengeID() string {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		panic("link: crypto/rand failed: " + err.Error())
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

func challengePurpose(sess *Session) string { return "link_challenge:" + sess.ID }

func (s *Service) sealChallenge(sess *Session, c *challenge) (string, error) {
	b, err := json.Marshal(c)
	if err != nil {
		return "", fmt.Errorf("link: seal challenge: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(s.cfg.Box.Seal(b, challengePurpose(sess))), nil
}

func (s *Service) openChallenge(sess *Session, sealed string) (*challenge, error) {
	raw, err := base64.RawURLEncoding.DecodeString(sealed)
	if err != nil {
		return nil, ErrChallenge
	}
	b, err := s.cfg.Box.Open(raw, challengePurpose(sess))
	if err != nil {
		return nil, ErrChallenge
	}
	var c challenge
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, ErrChallenge
	}
	if !s.cfg.Now().Before(c.ExpiresAt) {
		return nil, ErrChallenge
	}
	return &c, nil
}
