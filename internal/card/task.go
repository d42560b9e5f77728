package card

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/riverqueue/river"

	"github.com/hitchdev/hitch/internal/account"
	"github.com/hitchdev/hitch/internal/event"
	"github.com/hitchdev/hitch/internal/merchant"
	"github.com/hitchdev/hitch/internal/queue"
	"github.com/hitchdev/hitch/internal/seal"
	"github.com/hitchdev/hitch/internal/store"
	"github.com/hitchdev/hitch/internal/transaction"
)

// Failure reasons of CARD_FAILED and VAULTING_FAILED that Hitch itself
// decides (the rest come from the merchant, as the public service's do).
const (
	ReasonNoCard        = "did not receive payment method information"
	ReasonNotHandled    = "could not handle payment method information"
	ReasonNotRetrieved  = "could not retrieve payment method information"
	defaultCardWindow   = 15 * time.Second
	defaultTaskDeadline = 10 * time.Minute
)

// Reasons lists every failure reason a task may end with.
var Reasons = []string{"account", "card", "card expired", "card in use", "insufficient funds", "subscription",
	"subscription admin", "third-party payment method on subscription", "too close to end of billing cycle",
	"too many attempts", "credentials", "otp", "credentials timeout", "otp timeout", "questions timeout",
	"zip timeout", "session not authenticated", ReasonNoCard, ReasonNotHandled, ReasonNotRetrieved, "other"}

var (
	// ErrTaskNotFound: the developer has no task with this id.
	ErrTaskNotFound = errors.New("card: task not found")
	// ErrTaskNotAwaitingCard: the task has its card already, has ended, or
	// does not take one (vault).
	ErrTaskNotAwaitingCard = errors.New("card: the task is not waiting for card data")
	// ErrCardWindowClosed: the card came after the task's window.
	ErrCardWindowClosed = errors.New("card: the task's window for card data has closed")
	// ErrAccountDisconnected: the account must log in again first.
	ErrAccountDisconnected = errors.New("card: the merchant account is disconnected")
	// ErrTaskClaimed: another connector has the task.
	ErrTaskClaimed = errors.New("card: the task is not pending or was claimed already")
	// ErrInvalidResult: a connector's result breaks a rule.
	ErrInvalidResult = errors.New("card: invalid task result")
)

// Config tunes the task service.
type Config struct {
	// Development makes the built-in simulator decide outcomes (the test
	// cards of docs/cards.md); in production connectors do.
	Development bool
	// CardWindow is how long a card switch task waits for its card after
	// AUTHENTICATED (default 15 s).
	CardWindow time.Duration
	// ConnectorDeadline is how long a pending production task waits for its
	// connector's result before it fails and its card is erased (default
	// 10 minutes).
	ConnectorDeadline time.Duration
	// Subscriptions lists the ids of an account's subscriptions, which
	// CARD_UPDATED reports for subscription merchants (nil: none).
	Subscriptions func(ctx context.Context, k transaction.AccountKey) ([]string, error)
	// Logger receives the development simulator's errors (nil: discarded).
	Logger *slog.Logger
}

// Service runs tasks: card switches and vaulting.
type Service struct {
	store    store.Store
	box      *seal.Box
	queue    *queue.Queue
	accounts *account.Service
	catalog  *merchant.Catalog
	events   *event.Log
	now      func() time.Time
	cfg      Config
	// cvvs holds CVVs in memory only, for production tasks until their
	// connector claims them.
	cvvs *cvvHold
	log  *slog.Logger
	// wake tells RunSimulator that a task waits for it.
	wake chan struct{}
}

// NewService wires the task service.
func NewService(st store.Store, box *seal.Box, q *queue.Queue, accounts *account.Service, catalog *merchant.Catalog,
	events *event.Log, now func() time.Time, cfg Config) *Service {
	cfg.CardWindow = cmp.Or(cfg.CardWindow, defaultCardWindow)
	cfg.ConnectorDeadline = cmp.Or(cfg.ConnectorDeadline, defaultTaskDeadline)
	return &Service{store: st, box: box, queue: q, accounts: accounts, catalog: catalog, events: events, now: now,
		cfg: cfg, cvvs: newCVVHold(now), log: logger(cfg.Logger), wake: make(chan struct{}, 1)}
}

// CardWindow is how long a card switch waits for its card.
func (s *Service) CardWindow() time.Duration { return s.cfg.CardWindow }

// taskIDEpoch is where the time in task ids starts: 2026-01-01 UTC, in
// Unix milliseconds.
const taskIDEpoch = 1767225600000

// newTaskID makes an id in [1, 2^53), what JavaScript reads exactly: the
// milliseconds from taskIDEpoch to at (41 bits, enough until 2095), then 12
// random bits. Ids made in time order are stored in time order: with
// random ids every task's insert, and again its end, wrote a different
// page of the table, each a frame of SQLite's WAL (or a full-page image on
// PostgreSQL). An id tells when its task was opened, which its events tell
// anyway, and no developer another's volume. A clock outside the 41 bits'
// years gets 53 random bits: squeezed into one millisecond's 4,096 ids,
// its tasks would soon find no free one.
func newTaskID(at time.Time) int64 {
	ms := at.UnixMilli() - taskIDEpoch
	for {
		var b [8]byte
		_, _ = rand.Read(b[:]) // never fails on supported platforms
		id := int64(binary.BigEndian.Uint64(b[:]) >> 11)
		if ms >= 0 && ms < 1<<41 {
			id = ms<<12 | id&0xfff
		}
		if id > 0 {
			return id
		}
	}
}

// Authenticate links an account for a login of the card switcher or the
// vault and opens its task, with AUTHENTICATED carrying task_id, in one
// transaction. A card switch then waits CardWindow for its card; a
// vaulting starts at once. In development, vaultFails makes the simulated
// vaulting fail.
func (s *Service) Authenticate(ctx context.Context, p account.LinkParams, vaultFails bool) (*account.Account, int64, error) {
	if p.Product != "card_switcher" && p.Product != "vault" {
		return nil, 0, fmt.Errorf("card: authenticate: product %q has no task", p.Product)
	}
	var taskID int64
	p.Task = func(ctx context.Context, ex store.Executor, u *store.User, a *store.Account, at time.Time) (int64, error) {
		metadata, err := metadataJSON(p.Metadata)
		if err != nil {
			return 0, err
		}
		t := &store.Task{ClientID: p.ClientID, ExternalUserID: u.ExternalUserID, UserID: u.ID, AccountID: a.ID,
			MerchantID: a.MerchantID, Product: p.Product, CardID: p.CardID, SessionID: p.SessionID,
			Metadata: metadata, CreatedAt: at, UpdatedAt: at}
		t.Status = store.TaskPending
		var jobs []river.InsertManyParams
		switch {
		case p.Product == "card_switcher":
			deadline := at.Add(s.cfg.CardWindow)
			t.Status, t.CardDeadline = store.TaskAwaitingCard, &deadline
		case s.cfg.Development:
			t.Simulation = simulation(vaultFails, "")
		}
		if err := s.insertTask(ctx, ex, t); err != nil {
			return 0, err
		}
		switch {
		case p.Product == "card_switcher":
			jobs = append(jobs, deadlineJob(p.ClientID, t.ID, store.TaskAwaitingCard, *t.CardDeadline))
		case !s.cfg.Development:
			jobs = append(jobs, s.connectorDeadline(p.ClientID, t.ID, at))
		}
		taskID = t.ID
		if len(jobs) == 0 {
			return t.ID, nil
		}
		return t.ID, s.queue.InsertTx(ctx, ex, jobs)
	}
	a, _, err := s.accounts.Link(ctx, p)
	if err != nil {
		return nil, 0, err
	}
	if s.cfg.Development && p.Product == "vault" {
		s.poke()
	}
	return a, taskID, nil
}

// insertTask stores t under a fresh id, drawing again when it is taken: a
// chance of one in 4,096 for each other task opened in the same
// millisecond.
func (s *Service) insertTask(ctx context.Context, ex store.Executor, t *store.Task) error {
	for range 8 {
		t.ID = newTaskID(t.CreatedAt)
		err := ex.TaskInsert(ctx, t)
		if !errors.Is(err, store.ErrConflict) {
			return err
		}
	}
	return errors.New("card: task ids keep colliding")
}

// SubmitParams is card data for a task, or for an account already linked.
type SubmitParams struct {
	ClientID string
	// TaskID names a card switch task waiting for its card; otherwise the
	// account is named by ExternalUserID and MerchantID and a new task is
	// opened for it.
	TaskID         *int64
	ExternalUserID string
	MerchantID     int64
	// Payload is validated card data; Submit wipes its card fields.
	Payload *Payload
}

// Submit hands validated card data to a task: the one waiting for it, or a
// new one for an already linked account. The outcome comes later as
// CARD_UPDATED or CARD_FAILED. Only the card's brand, last four and expiry
// are written; in production the card without its CVV is also sealed for
// the connector until it claims the task, and the CVV is held in memory.
func (s *Service) Submit(ctx context.Context, p SubmitParams) (*store.Task, error) {
	defer p.Payload.Wipe()
	month, year := p.Payload.Card.Expiry()
	summary := store.CardSummary{Brand: Brand(p.Payload.Card.Number), LastFour: p.Payload.Card.LastFour(),
		ExpMonth: month, ExpYear: year}
	// In development the simulator decides from the number here, so the
	// card goes no further than this function.
	var decision *string
	if s.cfg.Development {
		outcome := testCardOutcome(p.Payload.Card.Number)
		decision = simulation(outcome != "", outcome)
	}
	now := s.now()
	var task *store.Task
	err := s.store.InTx(ctx, func(ex store.Executor) error {
		var err error
		if p.TaskID != nil {
			task, err = s.attach(ctx, ex, p.ClientID, *p.TaskID, summary, decision, now)
		} else {
			task, err = s.openForAccount(ctx, ex, p, summary, decision, now)
		}
		if err != nil || s.cfg.Development {
			return err
		}
		sealed, err := s.sealCard(task, p.Payload)
		if err != nil {
			return err
		}
		if err := ex.TaskSeal(ctx, p.ClientID, task.ID, sealed); err != nil {
			return err
		}
		return s.queue.InsertTx(ctx, ex, []river.InsertManyParams{s.connectorDeadline(p.ClientID, task.ID, now)})
	})
	if err != nil {
		return nil, err
	}
	if s.cfg.Development {
		s.poke()
	} else {
		s.cvvs.put(p.ClientID, task.ID, p.Payload.Card.CVV, now.Add(s.cfg.ConnectorDeadline))
	}
	return task, nil
}

// attach gives the card to a task waiting for it, or says why it cannot.
func (s *Service) attach(ctx context.Context, ex store.Executor, clientID string, id int64, summary store.CardSummary,
	decision *string, now time.Time) (*store.Task, error) {
	task, err := ex.TaskAttachCard(ctx, &store.TaskAttachCardParams{ClientID: clientID, ID: id, Card: summary,
		Simulation: decision, Now: now})
	if err == nil || !errors.Is(err, store.ErrNotFound) {
		return task, err
	}
	task, err = ex.TaskGet(ctx, clientID, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil, ErrTaskNotFound
	case err != nil:
		return nil, err
	case task.Status == store.TaskAwaitingCard: // only its deadline can have stopped it
		return nil, ErrCardWindowClosed
	default:
		return nil, ErrTaskNotAwaitingCard
	}
}

// openForAccount opens a card switch task, card in hand, for an account
// already linked and connected at a merchant with the card switcher.
func (s *Service) openForAccount(ctx context.Context, ex store.Executor, p SubmitParams, summary store.CardSummary,
	decision *string, now time.Time) (*store.Task, error) {
	m, ok := s.catalog.Get(p.MerchantID)
	if !ok {
		return nil, account.ErrUnknownMerchant
	}
	if !m.Supports("card_switcher") {
		return nil, account.ErrMerchantUnsupported
	}
	u, err := ex.UserGet(ctx, p.ClientID, p.ExternalUserID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, account.ErrUserNotFound
	} else if err != nil {
		return nil, err
	}
	a, err := ex.AccountGet(ctx, &store.AccountGetParams{ClientID: p.ClientID, UserID: u.ID, MerchantID: p.MerchantID})
	if errors.Is(err, store.ErrNotFound) {
		return nil, account.ErrNotFound
	} else if err != nil {
		return nil, err
	}
	if a.ConnectionStatus != account.Connected {
		return nil, ErrAccountDisconnected
	}
	// No login started this task: the account's last user action changes
	// only when it ends, which keeps the account's row out of this
	// transaction (on PostgreSQL, concurrent cards for one account would
	// queue on its lock). Its events echo the metadata of the account's
	// most recent link.
	t := &store.Task{ClientID: p.ClientID, ExternalUserID: u.ExternalUserID, UserID: u.ID, AccountID: a.ID,
		MerchantID: p.MerchantID, Product: "card_switcher", Status: store.TaskPending, Metadata: a.Metadata,
		CardBrand: &summary.Brand, CardLastFour: &summary.LastFour, CardExpMonth: &summary.ExpMonth,
		CardExpYear: &summary.ExpYear, Simulation: decision, CreatedAt: now, UpdatedAt: now}
	if err := s.insertTask(ctx, ex, t); err != nil {
		return nil, err
	}
	return t, nil
}

// sealedCard is what a connector gets of a card: everything but the CVV.
type sealedCard struct {
	User       PayloadUser `json:"user"`
	Number     string      `json:"number"`
	Expiration string      `json:"expiration"`
}

func (s *Service) sealCard(t *store.Task, p *Payload) ([]byte, error) {
	plain, err := json.Marshal(sealedCard{User: p.User, Number: p.Card.Number, Expiration: p.Card.Expiration})
	if err != nil {
		return nil, err
	}
	defer clear(plain)
	return s.box.Seal(plain, cardPurpose(t.ClientID, t.ID)), nil
}

func cardPurpose(clientID string, taskID int64) string {
	return "task_card:" + clientID + ":" + strconv.FormatInt(taskID, 10)
}

// connectorDeadline is the job that fails a production task its connector
// has not ended in time.
func (s *Service) connectorDeadline(clientID string, taskID int64, now time.Time) river.InsertManyParams {
	return deadlineJob(clientID, taskID, store.TaskPending, now.Add(s.cfg.ConnectorDeadline))
}

func deadlineJob(clientID string, taskID int64, from string, at time.Time) river.InsertManyParams {
	return river.InsertManyParams{
		Args:       DeadlineArgs{ClientID: clientID, TaskID: taskID, From: from},
		InsertOpts: &river.InsertOpts{ScheduledAt: at},
	}
}

// Result is how a task ended.
type Result struct {
	Succeeded bool
	// Reason is the failure reason (one of Reasons).
	Reason string
	// Card is the vaulted card's summary, for a vaulting that succeeded.
	Card *store.CardSummary
}

// Finish ends a task with its result and records CARD_UPDATED,
// CARD_FAILED, VAULTING_SUCCEEDED or VAULTING_FAILED, with the account's
// last user action, and on a card switch that succeeded the update_card
// scope, all in one transaction. from limits the states it ends ("" for
// any unfinished one). A task that has ended already is left as it is:
// Finish reports false.
func (s *Service) Finish(ctx context.Context, clientID string, id int64, from string, r Result) (bool, error) {
	task, err := s.store.TaskGet(ctx, clientID, id)
	if errors.Is(err, store.ErrNotFound) {
		return false, ErrTaskNotFound
	} else if err != nil {
		return false, err
	}
	return s.finish(ctx, task, from, r)
}

// finish is Finish of a task read already.
func (s *Service) finish(ctx context.Context, task *store.Task, from string, r Result) (bool, error) {
	subscriptions, err := s.checkResult(ctx, task, r)
	if err != nil {
		return false, err
	}
	now := s.now()
	finished := false
	err = s.store.InTx(ctx, func(ex store.Executor) error {
		var err error
		finished, err = s.finishIn(ctx, ex, task, from, r, subscriptions, now)
		return err
	})
	s.cvvs.drop(task.ClientID, task.ID)
	return finished, err
}

// checkResult checks r against the task's rules and returns the
// subscriptions CARD_UPDATED reports, read before the transaction.
func (s *Service) checkResult(ctx context.Context, task *store.Task, r Result) ([]string, error) {
	if !r.Succeeded && !validReason(r.Reason) {
		return nil, fmt.Errorf("%w: unknown reason %q", ErrInvalidResult, r.Reason)
	}
	if task.Product == "vault" && r.Succeeded && r.Card == nil {
		return nil, fmt.Errorf("%w: a vaulting that succeeded needs its card", ErrInvalidResult)
	}
	if task.Product != "vault" && r.Card != nil {
		return nil, fmt.Errorf("%w: only a vaulting reports a card", ErrInvalidResult)
	}
	m, ok := s.catalog.Get(task.MerchantID)
	if !ok || !m.Subscription || task.Product != "card_switcher" || !r.Succeeded || s.cfg.Subscriptions == nil {
		return nil, nil
	}
	key := transaction.AccountKey{ClientID: task.ClientID, ExternalUserID: task.ExternalUserID, MerchantID: task.MerchantID}
	subscriptions, err := s.cfg.Subscriptions(ctx, key)
	if err != nil && !errors.Is(err, account.ErrNotFound) {
		return nil, err
	}
	return subscriptions, nil
}

// finishIn ends the task in ex's transaction and records its outcome; it
// reports false, recording nothing, when the task has ended already.
func (s *Service) finishIn(ctx context.Context, ex store.Executor, task *store.Task, from string, r Result,
	subscriptions []string, now time.Time) (bool, error) {
	ended, err := s.endTask(ctx, ex, task, from, r, now)
	if ended == nil || err != nil {
		return false, err
	}
	if err := s.recordAction(ctx, ex, ended, r, now); err != nil {
		return false, err
	}
	return true, s.recordEvent(ctx, ex, ended, r, subscriptions, now)
}

// endTask moves the task to its end state, or returns nil when it has
// ended already.
func (s *Service) endTask(ctx context.Context, ex store.Executor, task *store.Task, from string, r Result,
	now time.Time) (*store.Task, error) {
	status, reason := store.TaskSucceeded, (*string)(nil)
	if !r.Succeeded {
		status, reason = store.TaskFailed, &r.Reason
	}
	ended, err := ex.TaskFinish(ctx, &store.TaskFinishParams{ClientID: task.ClientID, ID: task.ID, From: from,
		Status: status, Reason: reason, Card: r.Card, Now: now})
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	return ended, err
}

// recordAction records the ended task as its account's last user action
// for its product and, for a card switch that succeeded, gives the account
// the update_card scope.
func (s *Service) recordAction(ctx context.Context, ex store.Executor, task *store.Task, r Result, now time.Time) error {
	if err := s.setAction(ctx, ex, task, r, now); err != nil {
		return err
	}
	if task.Product == "card_switcher" && r.Succeeded {
		return s.addUpdateCardScope(ctx, ex, task, now)
	}
	return nil
}

// setAction records the ended task as its account's last user action for
// its product.
func (s *Service) setAction(ctx context.Context, ex store.Executor, task *store.Task, r Result, now time.Time) error {
	action := account.ActionSuccess
	if !r.Succeeded {
		action = account.ActionFailure
	}
	err := ex.AccountActionSet(ctx, &store.AccountActionSetParams{ClientID: task.ClientID, AccountID: task.AccountID,
		Product: task.Product, Status: action, AttemptedAt: task.CreatedAt, Now: now})
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	return nil
}

// addUpdateCardScope gives the task's account the update_card scope, after
// a card switch that succeeded. An account disconnected or unlinked
// meanwhile gets no scope.
func (s *Service) addUpdateCardScope(ctx context.Context, ex store.Executor, task *store.Task, now time.Time) error {
	err := ex.AccountAddScope(ctx, task.ClientID, task.AccountID, account.ScopeUpdateCard, now)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	return nil
}

// recordEvent records the ended task's outcome event.
func (s *Service) recordEvent(ctx context.Context, ex store.Executor, task *store.Task, r Result, subscriptions []string, now time.Time) error {
	data := map[string]any{"card_id": task.CardID}
	var typ string
	switch {
	case task.Product == "card_switcher" && r.Succeeded:
		typ = event.CardUpdated
		if subscriptions != nil {
			refs := make([]event.Ref, len(subscriptions))
			for i, id := range subscriptions {
				refs[i] = event.Ref{ID: id}
			}
			data["subscriptions"] = refs
		}
	case task.Product == "card_switcher":
		typ, data["reason"] = event.CardFailed, r.Reason
	case r.Succeeded:
		typ = event.VaultingSucceeded
		data["payment_method"] = map[string]any{"type": "CARD", "brand": *task.CardBrand,
			"last_four": *task.CardLastFour, "expiration": fmt.Sprintf("%02d/%d", *task.CardExpMonth, *task.CardExpYear)}
	default:
		typ, data["reason"] = event.VaultingFailed, r.Reason
	}
	metadata, err := event.ParseMetadata(task.Metadata)
	if err != nil {
		return err
	}
	_, err = s.events.Record(ctx, ex, event.Params{
		ClientID:  task.ClientID,
		User:      &store.User{ID: task.UserID, ClientID: task.ClientID, ExternalUserID: task.ExternalUserID},
		Type:      typ,
		SessionID: task.SessionID,
		TaskID:    &task.ID,
		Merchant:  s.accounts.EventMerchant(task.MerchantID),
		Data:      data,
		Metadata:  metadata,
		At:        now,
	})
	return err
}

func validReason(r string) bool {
	for _, x := range Reasons {
		if x == r {
			return true
		}
	}
	return false
}

func metadataJSON(m map[string]string) (json.RawMessage, error) {
	if m == nil {
		return nil, nil
	}
	return json.Marshal(m)
}
