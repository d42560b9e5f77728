package connector

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/hitchdev/hitch/internal/seal"
	"github.com/hitchdev/hitch/internal/store"
)

// Defaults of WorkConfig.
const (
	// DefaultLease is how long a connector holds work without calling
	// Hitch about it; a connector that dies loses its work after it.
	DefaultLease = 30 * time.Second
	// DefaultClaimWait is how long a login waits for a connector to claim it
	// when no connector for its merchant is online any more.
	DefaultClaimWait = 15 * time.Second
	// DefaultStepWait bounds one wait of the hosted flow for a connector's
	// next step; a login still under way then is answered "pending", and the
	// flow waits again (a long poll well under proxies' usual 60 s).
	DefaultStepWait = 25 * time.Second
	// LoginLifetime bounds a login from start to end, waits for the user's
	// answers included.
	LoginLifetime = 10 * time.Minute
	// DefaultRefreshInterval is how often a linked account is refreshed.
	DefaultRefreshInterval = 4 * time.Hour
	// OnlineWindow: a connector that called Hitch within it is online, and
	// work for its merchants is routed to connectors.
	OnlineWindow = 30 * time.Second
	// InputLifetime is how long sealed credentials or answers may wait for
	// a connector before they are erased.
	InputLifetime = 10 * time.Minute
	// MaxRefreshAttempts is how many connectors may lose a refresh before it
	// fails.
	MaxRefreshAttempts = 3
	// workRetention is how long ended work is kept for `hitch connectors
	// list` and the metrics.
	workRetention = 24 * time.Hour
	// waitPoll is how often a waiter reads the work's row: the hosted flow
	// and a connector may be on different nodes.
	waitPoll = 50 * time.Millisecond
)

// Work failure reasons of Hitch's own (a connector reports the merchant's).
const (
	// ReasonInterrupted: the connector holding the login stopped answering,
	// or none claimed it in time. The user may try again.
	ReasonInterrupted = "interrupted"
	// ReasonAbandoned: the user left the flow while the login ran.
	ReasonAbandoned = "abandoned"
)

var (
	// ErrLease: the work is not held under this lease (another connector's,
	// or the lease ended).
	ErrLease = errors.New("connector: the work is not held under this lease")
	// ErrWorkNotFound: no such work.
	ErrWorkNotFound = errors.New("connector: work not found")
	// ErrTransition: the work is not in a state where this report fits.
	ErrTransition = errors.New("connector: the work is not waiting for this report")
	// ErrNotServed: the connector has not declared the merchant.
	ErrNotServed = errors.New("connector: merchant not served by this connector")
)

// Disconnecter marks an account disconnected (account.Service.Disconnect),
// raising ACCOUNT_LOGIN_REQUIRED.
type Disconnecter func(ctx context.Context, clientID, externalUserID string, merchantID int64) error

// WorkConfig configures Work. Zero durations take the defaults above.
type WorkConfig struct {
	Store           store.Store
	Box             *seal.Box
	Now             func() time.Time
	Lease           time.Duration
	ClaimWait       time.Duration
	StepWait        time.Duration
	RefreshInterval time.Duration
	Disconnect      Disconnecter
	// DetectionEnded settles a detect unit's request in ex once the unit
	// ended without a report (detection.Service.SettleTx).
	DetectionEnded func(ctx context.Context, ex store.Executor, wk *store.Work) error
	Metrics        *Metrics
}

// Work routes logins and refreshes to connectors and keeps their leases.
type Work struct {
	cfg WorkConfig

	mu        sync.Mutex
	listed    []*store.Connector
	listedAt  time.Time
	lastSeen  map[string]time.Time
	claimedAt sync.Map // work id → time claimed, for the metrics

	draining  chan struct{} // closed by Drain
	drainOnce sync.Once
}

// Drain makes the long polls under way, and those to come, answer at once
// as if their wait were up (a login still pending, no answer yet), so that
// a node shutting down answers them within its shutdown timeout; callers
// ask again, of another node or of this one restarted.
func (w *Work) Drain() { w.drainOnce.Do(func() { close(w.draining) }) }

func (w *Work) isDraining() bool {
	select {
	case <-w.draining:
		return true
	default:
		return false
	}
}

// NewWork returns a Work.
func NewWork(cfg WorkConfig) *Work {
	cfg.Lease = cmp.Or(cfg.Lease, DefaultLease)
	cfg.ClaimWait = cmp.Or(cfg.ClaimWait, DefaultClaimWait)
	cfg.StepWait = cmp.Or(cfg.StepWait, DefaultStepWait)
	cfg.RefreshInterval = cmp.Or(cfg.RefreshInterval, DefaultRefreshInterval)
	if cfg.Metrics == nil {
		cfg.Metrics = NewMetrics()
	}
	return &Work{cfg: cfg, lastSeen: map[string]time.Time{}, draining: make(chan struct{})}
}

// Metrics are the work's metrics, to register.
func (w *Work) Metrics() *Metrics { return w.cfg.Metrics }

// RefreshInterval is how often linked accounts are refreshed.
func (w *Work) RefreshInterval() time.Duration { return w.cfg.RefreshInterval }

// connectors lists the connectors, read at most once a second: routing
// asks on every login, and a declaration on another node reaches this one
// within the second.
func (w *Work) connectors(ctx context.Context) ([]*store.Connector, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	now := w.cfg.Now()
	if w.listed != nil && now.Sub(w.listedAt) < time.Second {
		return w.listed, nil
	}
	list, err := w.cfg.Store.ConnectorList(ctx)
	if err != nil {
		return nil, err
	}
	w.listed, w.listedAt = list, now
	return list, nil
}

// Declare records the merchants a connector serves.
func (w *Work) Declare(ctx context.Context, c *Connector, merchantIDs []int64) error {
	ids := slices.Clone(merchantIDs)
	slices.Sort(ids)
	ids = slices.Compact(ids)
	if err := w.cfg.Store.ConnectorDeclare(ctx, c.ID, ids, w.cfg.Now().UTC()); err != nil {
		return err
	}
	w.mu.Lock()
	w.listed = nil
	w.lastSeen[c.ID] = w.cfg.Now()
	w.mu.Unlock()
	return nil
}

// Declared returns the merchants a connector declared (nil: none yet).
func (w *Work) Declared(ctx context.Context, id string) ([]int64, error) {
	list, err := w.connectors(ctx)
	if err != nil {
		return nil, err
	}
	for _, c := range list {
		if c.ID == id {
			return c.MerchantIDs, nil
		}
	}
	return nil, nil
}

// Serves reports whether connector id declared the merchant.
func (w *Work) Serves(ctx context.Context, id string, merchantID int64) (bool, error) {
	ids, err := w.Declared(ctx, id)
	return slices.Contains(ids, merchantID), err
}

// Online reports whether an online connector serves the merchant: then its
// logins and refreshes go to connectors.
func (w *Work) Online(ctx context.Context, merchantID int64) (bool, error) {
	list, err := w.connectors(ctx)
	if err != nil {
		return false, err
	}
	now := w.cfg.Now()
	for _, c := range list {
		if c.RevokedAt == nil && c.LastSeenAt != nil && now.Sub(*c.LastSeenAt) < OnlineWindow &&
			slices.Contains(c.MerchantIDs, merchantID) {
			return true, nil
		}
	}
	return false, nil
}

// Seen records that a connector called, at most every few seconds.
func (w *Work) Seen(ctx context.Context, id string) error {
	now := w.cfg.Now()
	w.mu.Lock()
	last, ok := w.lastSeen[id]
	fresh := ok && now.Sub(last) < OnlineWindow/6
	if !fresh {
		w.lastSeen[id] = now
	}
	w.mu.Unlock()
	if fresh {
		return nil
	}
	return w.cfg.Store.ConnectorSeen(ctx, id, now.UTC())
}

// UserCredentials are a user's credentials at a merchant, in the clear
// only in memory.
type UserCredentials struct {
	Username string `json:"username"`
	Password string `json:"password"`
}

// LoginParams start a login.
type LoginParams struct {
	ClientID       string
	ExternalUserID string
	MerchantID     int64
	Product        string
	Credentials    UserCredentials
}

func workPurpose(id string) string { return "connector_work:" + id }

// StartLogin queues a login for the merchant's connectors, its credentials
// sealed until one claims it.
func (w *Work) StartLogin(ctx context.Context, p LoginParams) (string, error) {
	plain, err := json.Marshal(p.Credentials)
	if err != nil {
		return "", err
	}
	defer clear(plain)
	id := newWorkID()
	now := w.cfg.Now().UTC()
	_, err = w.cfg.Store.WorkInsert(ctx, &store.Work{ID: id, Kind: store.WorkLogin, ClientID: p.ClientID,
		ExternalUserID: p.ExternalUserID, MerchantID: p.MerchantID, Product: p.Product, Status: store.WorkPending,
		InputSealed: w.cfg.Box.Seal(plain, workPurpose(id)), CreatedAt: now, UpdatedAt: now})
	if err != nil {
		return "", err
	}
	return id, nil
}

// waiting are the statuses in which the hosted flow waits for the
// connector.
var waiting = []string{store.WorkPending, store.WorkClaimed, store.WorkAnswered}

// Wait waits up to the step wait for a login's next step: a status other
// than pending, claimed or answered; a login still under way then is
// returned as it is, to wait for again. A login still unclaimed after the
// claim wait with no online connector for its merchant, one whose
// connector lets its lease end, and one older than LoginLifetime, fail as
// interrupted; one whose user leaves
// (ctx ends) fails as abandoned, which its connector learns at its next
// call.
func (w *Work) Wait(ctx context.Context, id string) (*store.Work, error) {
	deadline := w.cfg.Now().Add(w.cfg.StepWait)
	ticker := time.NewTicker(waitPoll)
	defer ticker.Stop()
	for {
		wk, err := w.cfg.Store.WorkGet(ctx, id)
		if errors.Is(err, store.ErrNotFound) {
			return nil, ErrWorkNotFound
		}
		if err != nil && ctx.Err() == nil {
			return nil, err
		}
		if err == nil && !slices.Contains(waiting, wk.Status) {
			return wk, nil
		}
		now := w.cfg.Now()
		// A login queued behind busy connectors waits its turn; one that no
		// online connector can take fails after the claim wait.
		unclaimable := false
		if err == nil && wk.Status == store.WorkPending && now.Sub(wk.CreatedAt) > w.cfg.ClaimWait {
			online, oerr := w.Online(ctx, wk.MerchantID)
			unclaimable = oerr == nil && !online
		}
		switch {
		case ctx.Err() != nil:
			return w.fail(context.WithoutCancel(ctx), id, waiting, ReasonAbandoned)
		case unclaimable,
			wk.LeaseUntil != nil && now.After(*wk.LeaseUntil),
			now.Sub(wk.CreatedAt) > LoginLifetime:
			f, err := w.fail(ctx, id, waiting, ReasonInterrupted)
			if errors.Is(err, ErrTransition) {
				continue // it moved on meanwhile: read it again
			}
			return f, err
		case now.After(deadline), w.isDraining():
			return wk, nil
		}
		select {
		case <-ctx.Done():
		case <-w.draining:
		case <-ticker.C:
		}
	}
}

// fail ends work that is in one of the from statuses, erasing its input.
func (w *Work) fail(ctx context.Context, id string, from []string, reason string) (*store.Work, error) {
	wk, err := w.cfg.Store.WorkSet(ctx, &store.WorkSetParams{ID: id, From: from, Status: store.WorkFailed,
		Reason: &reason, Now: w.cfg.Now().UTC()})
	if errors.Is(err, store.ErrNotFound) {
		return nil, ErrTransition
	}
	if err == nil {
		w.observe(wk, "failed")
	}
	return wk, err
}

// challenged are the statuses that wait for the user's answer.
var challenged = []string{store.WorkOTPRequired, store.WorkQuestionsRequired, store.WorkWrongAnswer}

// Answer hands the user's answer to the connector holding the login, sealed
// until it takes it.
func (w *Work) Answer(ctx context.Context, id, answer string) error {
	plain := []byte(answer)
	defer clear(plain)
	_, err := w.cfg.Store.WorkSet(ctx, &store.WorkSetParams{ID: id, From: challenged, Status: store.WorkAnswered,
		Input: w.cfg.Box.Seal(plain, workPurpose(id)), Now: w.cfg.Now().UTC()})
	if errors.Is(err, store.ErrNotFound) {
		return ErrTransition
	}
	return err
}

// Done ends a login the hosted flow has linked.
func (w *Work) Done(ctx context.Context, id string) error {
	wk, err := w.cfg.Store.WorkSet(ctx, &store.WorkSetParams{ID: id, From: []string{store.WorkAuthenticated},
		Status: store.WorkDone, Now: w.cfg.Now().UTC()})
	if errors.Is(err, store.ErrNotFound) {
		return ErrTransition
	}
	if err == nil {
		w.observe(wk, "succeeded")
	}
	return err
}

// Fail ends a login the hosted flow could not link.
func (w *Work) Fail(ctx context.Context, id, reason string) error {
	_, err := w.fail(ctx, id, []string{store.WorkAuthenticated}, reason)
	return err
}

// EnqueueRefresh queues a refresh of a linked account now (the first one
// after a link); one already open makes it a no-op.
func (w *Work) EnqueueRefresh(ctx context.Context, clientID, externalUserID string, merchantID int64) error {
	now := w.cfg.Now().UTC()
	_, err := w.cfg.Store.WorkInsert(ctx, &store.Work{ID: newWorkID(), Kind: store.WorkRefresh, ClientID: clientID,
		ExternalUserID: externalUserID, MerchantID: merchantID, Product: "transaction_link", Status: store.WorkPending,
		CreatedAt: now, UpdatedAt: now})
	return err
}

// Claimed is work a connector claimed, with what it needs in the clear.
type Claimed struct {
	*store.Work
	// Lease is the token the connector reports with; only its hash is kept.
	Lease string
	// Credentials of a login.
	Credentials *UserCredentials
	// State is the account's saved merchant session, for a refresh.
	State []byte
	// Detection is a detect unit's inputs.
	Detection *DetectionInput
}

// Claim gives a connector up to limit pending units of work of the kinds,
// for the merchants it declared.
func (w *Work) Claim(ctx context.Context, c *Connector, kinds []string, limit int) ([]*Claimed, error) {
	merchants, err := w.Declared(ctx, c.ID)
	if err != nil {
		return nil, err
	}
	if len(merchants) == 0 {
		return []*Claimed{}, nil
	}
	lease, hash := newLease()
	now := w.cfg.Now().UTC()
	var rows []*store.Work
	err = w.cfg.Store.InTx(ctx, func(ex store.Executor) error {
		rows, err = ex.WorkClaim(ctx, &store.WorkClaimParams{ConnectorID: c.ID, MerchantIDs: merchants, Kinds: kinds,
			Limit: limit, LeaseHash: hash, LeaseUntil: now.Add(w.cfg.Lease), Now: now})
		return err
	})
	if err != nil {
		return nil, err
	}
	out := make([]*Claimed, 0, len(rows))
	for _, r := range rows {
		cl := &Claimed{Work: r, Lease: lease}
		w.claimedAt.Store(r.ID, now)
		switch r.Kind {
		case store.WorkLogin:
			var creds UserCredentials
			if r.InputSealed != nil {
				plain, err := w.cfg.Box.Open(r.InputSealed, workPurpose(r.ID))
				if err != nil {
					return nil, fmt.Errorf("connector: open credentials: %w", err)
				}
				err = json.Unmarshal(plain, &creds)
				clear(plain)
				if err != nil {
					return nil, fmt.Errorf("connector: credentials: %w", err)
				}
			}
			cl.Credentials = &creds
		case store.WorkDetect:
			if cl.Detection, err = w.openDetection(r); err != nil {
				return nil, err
			}
		case store.WorkRefresh:
			st, err := w.cfg.Store.ConnectorStateGet(ctx, r.ClientID, r.ExternalUserID, r.MerchantID)
			if err == nil && st.StateSealed != nil {
				if cl.State, err = w.cfg.Box.Open(st.StateSealed, statePurpose(r)); err != nil {
					return nil, fmt.Errorf("connector: open state: %w", err)
				}
			} else if err != nil && !errors.Is(err, store.ErrNotFound) {
				return nil, err
			}
		}
		r.InputSealed = nil
		out = append(out, cl)
	}
	return out, nil
}

// AccountState returns the merchant session a connector saved for an
// account (nil when none): what a card task needs to act at the merchant.
func (w *Work) AccountState(ctx context.Context, clientID, externalUserID string, merchantID int64) ([]byte, error) {
	st, err := w.cfg.Store.ConnectorStateGet(ctx, clientID, externalUserID, merchantID)
	if errors.Is(err, store.ErrNotFound) || (err == nil && st.StateSealed == nil) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return w.cfg.Box.Open(st.StateSealed, statePurpose(&store.Work{ClientID: clientID, ExternalUserID: externalUserID, MerchantID: merchantID}))
}

func statePurpose(w *store.Work) string {
	return fmt.Sprintf("connector_state:%s:%s:%d", w.ClientID, w.ExternalUserID, w.MerchantID)
}

// held returns work the connector holds under lease, or why not.
func (w *Work) held(ctx context.Context, c *Connector, id, lease string) (*store.Work, error) {
	wk, err := w.cfg.Store.WorkGet(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, ErrWorkNotFound
	}
	if err != nil {
		return nil, err
	}
	if ok, err := w.Serves(ctx, c.ID, wk.MerchantID); err != nil {
		return nil, err
	} else if !ok {
		return nil, ErrNotServed
	}
	hash := leaseHash(lease)
	if wk.ConnectorID == nil || *wk.ConnectorID != c.ID || wk.LeaseHash == nil ||
		!equalHash(wk.LeaseHash, hash) || wk.LeaseUntil == nil || w.cfg.Now().After(*wk.LeaseUntil) {
		return nil, ErrLease
	}
	return wk, nil
}

// Step is a connector's report on a login.
type Step struct {
	// Status is otp_required, questions_required, wrong_answer,
	// authenticated or failed.
	Status   string
	Question string
	Reason   string
	// State is the merchant session to keep for refreshes (authenticated).
	State []byte
}

// loginSteps are the statuses a connector may report for a login, and the
// statuses each may follow.
var loginSteps = map[string][]string{
	store.WorkOTPRequired:       {store.WorkClaimed},
	store.WorkQuestionsRequired: {store.WorkClaimed},
	store.WorkWrongAnswer:       {store.WorkClaimed},
	store.WorkAuthenticated:     {store.WorkClaimed},
	store.WorkFailed:            {store.WorkClaimed, store.WorkOTPRequired, store.WorkQuestionsRequired, store.WorkWrongAnswer},
}

// Report records a login's step under the connector's lease, and renews it.
// The work as it now is tells a connector whose user left (failed,
// abandoned) to stop.
func (w *Work) Report(ctx context.Context, c *Connector, id, lease string, s Step) (*store.Work, error) {
	wk, err := w.held(ctx, c, id, lease)
	if err != nil {
		return nil, err
	}
	from, ok := loginSteps[s.Status]
	if wk.Kind != store.WorkLogin || !ok {
		return nil, ErrTransition
	}
	now := w.cfg.Now().UTC()
	var question, reason *string
	if s.Question != "" {
		question = &s.Question
	}
	if s.Reason != "" {
		reason = &s.Reason
	}
	hash := leaseHash(lease)
	err = w.cfg.Store.InTx(ctx, func(ex store.Executor) error {
		if s.Status == store.WorkAuthenticated && s.State != nil {
			if err := ex.ConnectorStatePut(ctx, &store.ConnectorState{ClientID: wk.ClientID, ExternalUserID: wk.ExternalUserID,
				MerchantID: wk.MerchantID, StateSealed: w.cfg.Box.Seal(s.State, statePurpose(wk)),
				NextRefreshAt: now.Add(w.cfg.RefreshInterval), UpdatedAt: now}); err != nil {
				return err
			}
		}
		wk, err = ex.WorkReport(ctx, &store.WorkReportParams{ID: id, LeaseHash: hash, From: from, Status: s.Status,
			Question: question, Reason: reason, LeaseUntil: now.Add(w.cfg.Lease), Now: now})
		return err
	})
	if errors.Is(err, store.ErrNotFound) {
		return nil, ErrTransition
	}
	if err == nil {
		w.cfg.Metrics.steps.WithLabelValues(c.ID, s.Status).Inc()
		if s.Status == store.WorkFailed {
			w.observe(wk, "failed")
		}
	}
	return wk, err
}

// TakeAnswer waits up to wait for the user's answer to the login's
// challenge, renewing the lease meanwhile; "" and no error when none came.
// A login that ended meanwhile (the user left) is ErrTransition.
func (w *Work) TakeAnswer(ctx context.Context, c *Connector, id, lease string, wait time.Duration) (string, error) {
	hash := leaseHash(lease)
	deadline := w.cfg.Now().Add(wait)
	ticker := time.NewTicker(waitPoll)
	defer ticker.Stop()
	for {
		wk, err := w.held(ctx, c, id, lease)
		if err != nil {
			return "", err
		}
		now := w.cfg.Now().UTC()
		switch wk.Status {
		case store.WorkAnswered:
			sealed, err := w.cfg.Store.WorkTakeAnswer(ctx, &store.WorkReportParams{ID: id, LeaseHash: hash,
				LeaseUntil: now.Add(w.cfg.Lease), Now: now})
			if err != nil {
				return "", err
			}
			plain, err := w.cfg.Box.Open(sealed, workPurpose(id))
			if err != nil {
				return "", fmt.Errorf("connector: open answer: %w", err)
			}
			return string(plain), nil
		case store.WorkOTPRequired, store.WorkQuestionsRequired, store.WorkWrongAnswer:
		default:
			return "", ErrTransition
		}
		// Renew the lease while the user types.
		if _, err := w.cfg.Store.WorkReport(ctx, &store.WorkReportParams{ID: id, LeaseHash: hash, From: []string{wk.Status},
			Status: wk.Status, Question: wk.Question, Reason: wk.Reason, LeaseUntil: now.Add(w.cfg.Lease), Now: now}); err != nil &&
			!errors.Is(err, store.ErrNotFound) {
			return "", err
		}
		if !now.Before(deadline) || w.isDraining() {
			return "", nil
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-w.draining:
		case <-ticker.C:
		}
	}
}

// Heartbeat renews the lease of work the connector holds and returns it.
func (w *Work) Heartbeat(ctx context.Context, c *Connector, id, lease string) (*store.Work, error) {
	wk, err := w.held(ctx, c, id, lease)
	if err != nil {
		return nil, err
	}
	now := w.cfg.Now().UTC()
	hash := leaseHash(lease)
	wk, err = w.cfg.Store.WorkReport(ctx, &store.WorkReportParams{ID: id, LeaseHash: hash, From: []string{wk.Status},
		Status: wk.Status, Question: wk.Question, Reason: wk.Reason, LeaseUntil: now.Add(w.cfg.Lease), Now: now})
	if errors.Is(err, store.ErrNotFound) {
		return nil, ErrLease
	}
	return wk, err
}

// Refresh outcomes.
const (
	RefreshSucceeded    = "succeeded"
	RefreshDisconnected = "disconnected"
	RefreshFailed       = "failed"
)

// Complete ends a refresh: succeeded (with the session to keep, if it
// changed), disconnected (the merchant logged the user out: the account is
// disconnected and ACCOUNT_LOGIN_REQUIRED raised) or failed.
func (w *Work) Complete(ctx context.Context, c *Connector, id, lease, outcome, reason string, state []byte) (*store.Work, error) {
	wk, err := w.held(ctx, c, id, lease)
	if err != nil {
		return nil, err
	}
	if wk.Kind != store.WorkRefresh || wk.Status != store.WorkClaimed {
		return nil, ErrTransition
	}
	now := w.cfg.Now().UTC()
	if outcome == RefreshDisconnected {
		if err := w.cfg.Disconnect(ctx, wk.ClientID, wk.ExternalUserID, wk.MerchantID); err != nil {
			return nil, err
		}
	}
	status, why := ending(outcome == RefreshSucceeded, outcome, reason)
	hash := leaseHash(lease)
	err = w.cfg.Store.InTx(ctx, func(ex store.Executor) error {
		switch outcome {
		case RefreshDisconnected:
			if err := ex.ConnectorStateDelete(ctx, wk.ClientID, wk.ExternalUserID, wk.MerchantID); err != nil {
				return err
			}
		case RefreshSucceeded:
			st := &store.ConnectorState{ClientID: wk.ClientID, ExternalUserID: wk.ExternalUserID, MerchantID: wk.MerchantID,
				NextRefreshAt: now.Add(w.cfg.RefreshInterval), LastRefreshAt: &now, UpdatedAt: now}
			if state != nil {
				st.StateSealed = w.cfg.Box.Seal(state, statePurpose(wk))
			}
			if err := ex.ConnectorStatePut(ctx, st); err != nil {
				return err
			}
		}
		wk, err = ex.WorkReport(ctx, &store.WorkReportParams{ID: id, LeaseHash: hash, From: []string{store.WorkClaimed},
			Status: status, Reason: why, LeaseUntil: now, Now: now})
		return err
	})
	if errors.Is(err, store.ErrNotFound) {
		return nil, ErrTransition
	}
	if err == nil {
		w.observe(wk, outcome)
	}
	return wk, err
}

// ending is the status and reason of work that ended with the outcome: done,
// or failed with the connector's reason (else the outcome).
func ending(succeeded bool, outcome, reason string) (string, *string) {
	if succeeded {
		return store.WorkDone, nil
	}
	if reason != "" {
		return store.WorkFailed, &reason
	}
	return store.WorkFailed, &outcome
}

// Reap releases work whose connector let its lease end (a refresh goes
// back to pending for another connector; a login, or a detect unit whose
// inputs left with the claim, fails as interrupted), fails logins and
// detect units no connector claimed within InputLifetime, erases inputs
// past it, and deletes old ended work.
func (w *Work) Reap(ctx context.Context) error {
	now := w.cfg.Now().UTC()
	expired, err := w.cfg.Store.WorkExpired(ctx, now, now.Add(-InputLifetime), 500)
	if err != nil {
		return err
	}
	for _, wk := range expired {
		p := &store.WorkSetParams{ID: wk.ID, From: []string{wk.Status}, Status: store.WorkFailed, Now: now}
		reason := ReasonInterrupted
		p.Reason = &reason
		if wk.Kind == store.WorkRefresh && wk.Attempts < MaxRefreshAttempts {
			p.Status, p.Reason, p.ReleaseLease = store.WorkPending, nil, true
		}
		if wk.Kind == store.WorkRefresh && wk.Status == store.WorkPending {
			continue
		}
		err := w.cfg.Store.InTx(ctx, func(ex store.Executor) error {
			if _, err := ex.WorkSet(ctx, p); err != nil {
				return err
			}
			if wk.Kind == store.WorkDetect && w.cfg.DetectionEnded != nil {
				return w.cfg.DetectionEnded(ctx, ex, wk)
			}
			return nil
		})
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
		if p.Status == store.WorkFailed {
			w.observe(wk, "interrupted")
		}
	}
	return w.cfg.Store.WorkPurge(ctx, now.Add(-workRetention), now.Add(-InputLifetime))
}

// ScheduleRefreshes queues a refresh of each connected account whose next
// refresh is due, at merchants an online connector serves.
func (w *Work) ScheduleRefreshes(ctx context.Context) (int, error) {
	now := w.cfg.Now().UTC()
	due, err := w.cfg.Store.ConnectorStatesDue(ctx, now, now.Add(w.cfg.RefreshInterval), 1_000)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, st := range due {
		if ok, err := w.Online(ctx, st.MerchantID); err != nil || !ok {
			if err != nil {
				return n, err
			}
			continue
		}
		if err := w.EnqueueRefresh(ctx, st.ClientID, st.ExternalUserID, st.MerchantID); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// Stats counts work per connector, kind and status: open work, and ended
// work of the last day.
func (w *Work) Stats(ctx context.Context) ([]*store.WorkCount, error) {
	return w.cfg.Store.WorkStats(ctx, w.cfg.Now().Add(-workRetention).UTC())
}

// observe counts ended work in the metrics.
func (w *Work) observe(wk *store.Work, outcome string) {
	conn := ""
	if wk.ConnectorID != nil {
		conn = *wk.ConnectorID
	}
	w.cfg.Metrics.work.WithLabelValues(conn, wk.Kind, outcome).Inc()
	if at, ok := w.claimedAt.LoadAndDelete(wk.ID); ok {
		w.cfg.Metrics.seconds.WithLabelValues(conn, wk.Kind).Observe(w.cfg.Now().Sub(at.(time.Time)).Seconds())
	}
}

func newWorkID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return "wk_" + hex.EncodeToString(b)
}

// newLease returns a lease token and its hash.
func newLease() (string, []byte) {
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	lease := base64.RawURLEncoding.EncodeToString(b)
	return lease, leaseHash(lease)
}

// leaseHash is what is kept of a lease.
func leaseHash(lease string) []byte {
	h := sha256.Sum256([]byte(lease))
	return h[:]
}
