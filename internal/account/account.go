// Package account manages users' merchant accounts: linking, listing,
// unlinking and the connection state, with the events those changes raise.
package account

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/hitchdev/hitch/internal/event"
	"github.com/hitchdev/hitch/internal/merchant"
	"github.com/hitchdev/hitch/internal/store"
)

// Connection statuses.
const (
	Connected    = "connected"
	Disconnected = "disconnected"
)

// ScopeUpdateCard is the scope of a connected account at a merchant that
// supports card switching.
const ScopeUpdateCard = "update_card"

// Lifecycle statuses: the status of the most recent login attempt for a
// product (docs/decisions.md lists what each means).
const (
	LifecycleLoginStarted      = "login_started"
	LifecycleOTPRequired       = "otp_required"
	LifecycleQuestionsRequired = "questions_required"
	LifecycleAuthenticated     = "authenticated"
	LifecycleLoginFailed       = "login_failed"
)

// Last user action statuses.
const (
	ActionPending = "pending"
	ActionSuccess = "success"
	ActionFailure = "failure"
)

// Products whose lifecycle an account tracks.
var Products = []string{"card_switcher", "transaction_link", "vault"}

var (
	// ErrUserNotFound: the developer has no user with this external_user_id.
	ErrUserNotFound = errors.New("account: user not found")
	// ErrNotFound: the user has no linked account at this merchant.
	ErrNotFound = errors.New("account: merchant account not found")
	// ErrUnknownMerchant: merchant_id is not in the catalog.
	ErrUnknownMerchant = errors.New("account: unknown merchant")
	// ErrMerchantUnsupported: the merchant does not support the product.
	ErrMerchantUnsupported = errors.New("account: merchant does not support this product")
)

// Service manages merchant accounts.
type Service struct {
	store     store.Store
	catalog   *merchant.Catalog
	publicURL string
	now       func() time.Time
	events    *event.Log
	// refs holds each catalog merchant as accounts show it, built once:
	// listing accounts is the hottest read and must not rebuild them.
	refs map[int64]MerchantRef
}

// NewService returns a Service. publicURL prefixes merchant logo paths.
// Events are recorded in events.
func NewService(st store.Store, catalog *merchant.Catalog, events *event.Log, publicURL string, now func() time.Time) *Service {
	s := &Service{store: st, catalog: catalog, events: events, publicURL: publicURL, now: now}
	all := catalog.All()
	s.refs = make(map[int64]MerchantRef, len(all))
	for _, m := range all {
		s.refs[m.ID] = MerchantRef{ID: m.ID, Name: m.Name, Logo: publicURL + merchant.LogoPath(m.ID)}
	}
	return s
}

// MerchantRef is a merchant as an account or event names it.
type MerchantRef struct {
	ID   int64
	Name string
	Logo string
}

// Merchant returns the reference of a merchant id. An id that left the
// catalog keeps its id and its logo path, with no name.
func (s *Service) Merchant(id int64) MerchantRef {
	if ref, ok := s.refs[id]; ok {
		return ref
	}
	return MerchantRef{ID: id, Logo: s.LogoURL(id)}
}

// Account is a merchant account with its merchant.
type Account struct {
	*store.Account
	Merchant MerchantRef
}

// LogoURL is the absolute URL of a merchant's logo.
func (s *Service) LogoURL(id int64) string { return s.publicURL + merchant.LogoPath(id) }

func (s *Service) user(ctx context.Context, ex store.Executor, clientID, externalUserID string) (*store.User, error) {
	u, err := ex.UserGet(ctx, clientID, externalUserID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, ErrUserNotFound
	}
	return u, err
}

func (s *Service) withMerchant(a *store.Account) *Account {
	return &Account{Account: a, Merchant: s.Merchant(a.MerchantID)}
}

// Version returns a user's id and the version of its accounts, which every
// change to them bumps: a listing rendered at that version is still the
// listing (internal/respcache).
func (s *Service) Version(ctx context.Context, clientID, externalUserID string) (userID string, version int64, err error) {
	userID, version, err = s.store.UserAccountsVersion(ctx, clientID, externalUserID)
	if errors.Is(err, store.ErrNotFound) {
		return "", 0, ErrUserNotFound
	}
	return userID, version, err
}

// List returns the user's linked accounts. product selects whose lifecycle
// is reported ("" for the most recent attempt of any product).
func (s *Service) List(ctx context.Context, clientID, externalUserID, product string) ([]*Account, error) {
	rows, err := s.store.AccountList(ctx, &store.AccountListParams{ClientID: clientID, ExternalUserID: externalUserID, Product: product})
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 { // tell an unknown user from one without accounts
		if _, err := s.user(ctx, s.store, clientID, externalUserID); err != nil {
			return nil, err
		}
	}
	accounts := make([]*Account, len(rows))
	for i, a := range rows {
		accounts[i] = s.withMerchant(a)
	}
	return accounts, nil
}

// Get returns one linked account.
func (s *Service) Get(ctx context.Context, clientID, externalUserID string, merchantID int64, product string) (*Account, error) {
	u, err := s.user(ctx, s.store, clientID, externalUserID)
	if err != nil {
		return nil, err
	}
	a, err := s.store.AccountGet(ctx, &store.AccountGetParams{ClientID: clientID, UserID: u.ID, MerchantID: merchantID, Product: product})
	if errors.Is(err, store.ErrNotFound) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	return s.withMerchant(a), nil
}

// Unlink removes the account from the user's linked accounts. It does not
// remove a card stored at the merchant.
func (s *Service) Unlink(ctx context.Context, clientID, externalUserID string, merchantID int64) error {
	return s.store.InTx(ctx, func(ex store.Executor) error {
		u, err := s.user(ctx, ex, clientID, externalUserID)
		if err != nil {
			return err
		}
		err = ex.AccountUnlink(ctx, &store.AccountRef{ClientID: clientID, UserID: u.ID, MerchantID: merchantID, Now: s.now()})
		if errors.Is(err, store.ErrNotFound) {
			return ErrNotFound
		}
		return err
	})
}

// Disconnect marks a connected account disconnected (its scopes cleared) and
// records ACCOUNT_LOGIN_REQUIRED, with the link's metadata, in the same
// transaction. Disconnecting an
// account that is already disconnected changes nothing and records nothing.
func (s *Service) Disconnect(ctx context.Context, clientID, externalUserID string, merchantID int64) (*Account, error) {
	var out *store.Account
	err := s.store.InTx(ctx, func(ex store.Executor) error {
		u, err := s.user(ctx, ex, clientID, externalUserID)
		if err != nil {
			return err
		}
		now := s.now()
		var changed bool
		out, changed, err = ex.AccountSetConnection(ctx, &store.AccountSetConnectionParams{
			AccountRef: store.AccountRef{ClientID: clientID, UserID: u.ID, MerchantID: merchantID, Now: now},
			Status:     Disconnected,
			Scopes:     []string{},
		})
		if errors.Is(err, store.ErrNotFound) {
			return ErrNotFound
		}
		if err != nil || !changed {
			return err
		}
		metadata, err := event.ParseMetadata(out.Metadata)
		if err != nil {
			return err
		}
		_, err = s.events.Record(ctx, ex, event.Params{
			ClientID: clientID,
			User:     u,
			Type:     event.AccountLoginRequired,
			Merchant: s.EventMerchant(merchantID),
			Metadata: metadata,
			At:       now,
		})
		return err
	})
	if err != nil {
		return nil, err
	}
	return s.withMerchant(out), nil
}

// EventMerchant is the merchant reference of an event envelope, with logo.
func (s *Service) EventMerchant(id int64) *event.Merchant {
	ref, ok := s.refs[id]
	if !ok {
		return &event.Merchant{ID: id}
	}
	return &event.Merchant{ID: ref.ID, Name: ref.Name, Logo: ref.Logo}
}

// LinkParams describe a successful login that links an account.
type LinkParams struct {
	ClientID       string
	ExternalUserID string
	MerchantID     int64
	// Product is the product the login was for.
	Product   string
	CardID    *string
	SessionID *string
	// EntryPoint is where in the developer's app the SDK was opened
	// (AUTHENTICATED's data.entrypoint); nil outside the hosted flow.
	EntryPoint *string
	// Metadata is echoed in AUTHENTICATED and kept with the account for
	// the events that follow from the link.
	Metadata map[string]string
	// Task, when set, opens the task the login starts (a card switch or a
	// vaulting) in the link's transaction; its id goes in AUTHENTICATED.
	Task func(ctx context.Context, ex store.Executor, u *store.User, a *store.Account, at time.Time) (int64, error)
}

// Link links (or links again and reconnects) the user's account at a
// merchant after a successful login, records the product's lifecycle and the
// AUTHENTICATED event, all in one transaction.
func (s *Service) Link(ctx context.Context, p LinkParams) (*Account, *store.Event, error) {
	m, ok := s.catalog.Get(p.MerchantID)
	if !ok {
		return nil, nil, ErrUnknownMerchant
	}
	if !m.Supports(p.Product) {
		return nil, nil, ErrMerchantUnsupported
	}
	var metadata json.RawMessage
	if p.Metadata != nil {
		var err error
		if metadata, err = json.Marshal(p.Metadata); err != nil {
			return nil, nil, fmt.Errorf("account: link: %w", err)
		}
	}
	now := s.now()
	var linked *store.Account
	var ev *store.Event
	err := s.store.InTx(ctx, func(ex store.Executor) error {
		u, err := ex.UserGetOrCreate(ctx, &store.UserGetOrCreateParams{
			ID: uuid.NewString(), ClientID: p.ClientID, ExternalUserID: p.ExternalUserID, CreatedAt: now})
		if err != nil {
			return err
		}
		// Scopes come from what was done at the merchant (a card switch adds
		// update_card), not from the login: linking again keeps them. The
		// metadata is this link's, whatever an earlier link had.
		a, err := ex.AccountLink(ctx, &store.AccountLinkParams{
			ID: uuid.NewString(), ClientID: p.ClientID, UserID: u.ID, MerchantID: p.MerchantID, Metadata: metadata, Now: now})
		if err != nil {
			return err
		}
		// A login that starts a task is an action that ends with the task.
		action := ActionSuccess
		if p.Task != nil {
			action = ActionPending
		}
		if err := ex.AccountLifecycleSet(ctx, &store.AccountLifecycleSetParams{ClientID: p.ClientID, AccountID: a.ID,
			Product: p.Product, Status: LifecycleAuthenticated, ActionStatus: action, At: now}); err != nil {
			return err
		}
		var taskID *int64
		if p.Task != nil {
			id, err := p.Task(ctx, ex, u, a, now)
			if err != nil {
				return err
			}
			taskID = &id
		}
		data := map[string]any{
			"send_card":  p.Product == "card_switcher",
			"entrypoint": p.EntryPoint,
		}
		if p.CardID != nil {
			data["card_id"] = *p.CardID
		}
		if ev, err = s.events.Record(ctx, ex, event.Params{
			ClientID:  p.ClientID,
			User:      u,
			Type:      event.Authenticated,
			SessionID: p.SessionID,
			TaskID:    taskID,
			Merchant:  s.EventMerchant(p.MerchantID),
			Data:      data,
			Metadata:  p.Metadata,
			At:        now,
		}); err != nil {
			return err
		}
		linked, err = ex.AccountGet(ctx, &store.AccountGetParams{ClientID: p.ClientID, UserID: u.ID, MerchantID: p.MerchantID, Product: p.Product})
		return err
	})
	if err != nil {
		return nil, nil, fmt.Errorf("account: link: %w", err)
	}
	return s.withMerchant(linked), ev, nil
}

// RecordLoginStep records a step of a login at a merchant. At a merchant the
// user has an account at already (logging in again) it sets the product's
// lifecycle status and last_user_action. A first login has no account to
// set them on until it succeeds, which Link records, so its steps are only
// kept in the login history (the dashboard's account health).
func (s *Service) RecordLoginStep(ctx context.Context, clientID, externalUserID string, merchantID int64, product, status, action string) error {
	return s.store.InTx(ctx, func(ex store.Executor) error {
		u, err := s.user(ctx, ex, clientID, externalUserID)
		if errors.Is(err, ErrUserNotFound) {
			return nil // no user, so no login to record
		}
		if err != nil {
			return err
		}
		a, err := ex.AccountGet(ctx, &store.AccountGetParams{ClientID: clientID, UserID: u.ID, MerchantID: merchantID})
		if errors.Is(err, store.ErrNotFound) {
			return ex.AccountLoginAdd(ctx, &store.AccountLoginAddParams{ClientID: clientID, UserID: u.ID,
				MerchantID: merchantID, Product: product, Status: status, At: s.now()})
		}
		if err != nil {
			return err
		}
		return ex.AccountLifecycleSet(ctx, &store.AccountLifecycleSetParams{ClientID: clientID, AccountID: a.ID,
			Product: product, Status: status, ActionStatus: action, At: s.now()})
	})
}
