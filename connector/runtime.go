package connector

import (
	"cmp"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/hitchdev/hitch/connector/browser"
)

// Site is what a connector author writes for one merchant's website. Each
// method gets a fresh, isolated browser session (its own cookies); a
// session that continues a login starts with the cookies saved then.
type Site interface {
	// MerchantID is the catalog merchant the site is.
	MerchantID() int64
	// Login logs in with the user's credentials. It calls ask for a one-time
	// code or a security answer when the merchant asks one. It returns nil
	// once logged in, a *Failure for a refusal by the merchant (wrong
	// password: reason "credentials"), or another error.
	Login(ctx context.Context, s *browser.Session, creds UserCredentials, ask Asker) error
	// Refresh reads the account's orders and subscriptions. It returns
	// ErrLoggedOut when the merchant no longer knows the session.
	Refresh(ctx context.Context, s *browser.Session) (*Snapshot, error)
	// SwitchCard adds the card and makes it the default; a *Failure says
	// why the merchant refused it (reason "card", "card expired", …).
	SwitchCard(ctx context.Context, s *browser.Session, c *Card) error
	// CardOnFile reads the default card on file; a *Failure says why there
	// is none to report (reason "did not receive payment method information").
	CardOnFile(ctx context.Context, s *browser.Session) (*CardSummary, error)
	// Detect reports whether an account exists for the e-mail or phone
	// number; nil when none. s is a fresh session.
	Detect(ctx context.Context, s *browser.Session, r *DetectionRequest) (*DetectedAccount, error)
}

// Snapshot is what a refresh read.
type Snapshot struct {
	Transactions  []Transaction
	Subscriptions []Subscription
}

// ErrLoggedOut: the merchant session has ended (expired, or revoked by a
// password change); the user must log in again.
var ErrLoggedOut = errors.New("connector: logged out at the merchant")

// Failure is a refusal by the merchant, with the public service's reason.
type Failure struct{ Reason string }

func (f *Failure) Error() string { return "connector: the merchant refused: " + f.Reason }

// Challenge kinds.
const (
	ChallengeOTP      = "otp"
	ChallengeQuestion = "question"
)

// Asker asks the user, through Hitch's hosted flow, for a one-time code
// (kind otp) or the answer to question (kind question). retry says the
// previous answer was refused. It waits until the user answers or the
// challenge expires.
type Asker func(ctx context.Context, kind, question string, retry bool) (string, error)

// Config configures Run.
type Config struct {
	Client *Client
	Pool   *browser.Pool
	Sites  []Site
	// Concurrency is how many units of work run at once (default: the
	// pool's contexts).
	Concurrency int
	// Poll is the wait between claims when there is nothing to do
	// (default 250 ms).
	Poll time.Duration
	// ChallengeTimeout bounds the wait for a user's answer (default 10 min).
	ChallengeTimeout time.Duration
	Log              *slog.Logger
}

// Run declares the sites' merchants and works until ctx ends: it claims
// logins and refreshes, card tasks and detection requests, runs each in its
// own browser session, and reports to Hitch. Work in progress when ctx ends
// is left to its lease: Hitch gives it to another connector.
func Run(ctx context.Context, cfg Config) error {
	if cfg.Client == nil || cfg.Pool == nil || len(cfg.Sites) == 0 {
		return errors.New("connector: Run needs a Client, a Pool and at least one Site")
	}
	cfg.Concurrency = cmp.Or(cfg.Concurrency, cfg.Pool.Stats().Capacity, 4)
	cfg.Poll = cmp.Or(cfg.Poll, 250*time.Millisecond)
	cfg.ChallengeTimeout = cmp.Or(cfg.ChallengeTimeout, 10*time.Minute)
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	r := &runner{cfg: cfg, sites: map[int64]Site{}, slots: make(chan struct{}, cfg.Concurrency), tasks: map[int64]bool{}}
	ids := make([]int64, 0, len(cfg.Sites))
	for _, s := range cfg.Sites {
		r.sites[s.MerchantID()] = s
		ids = append(ids, s.MerchantID())
	}
	// Hitch may not be up yet: declare until it answers.
	for {
		err := cfg.Client.Declare(ctx, ids)
		if err == nil {
			break
		}
		var apiErr *APIError
		if errors.As(err, &apiErr) && apiErr.Status < 500 && apiErr.Status != 429 {
			return err // credentials or merchants refused: retrying cannot help
		}
		cfg.Log.Warn("declare failed; trying again", "error", err)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(time.Second):
		}
	}
	cfg.Log.Info("connector declared", "merchant_ids", ids)
	var wg sync.WaitGroup
	defer wg.Wait()
	// Work a user waits on comes first: logins, then card tasks and
	// detections, and refreshes only with the slots left, so that a
	// connector busy refreshing gives its next free slot to a login or a
	// card.
	lastSide, backlog := time.Time{}, false
	for ctx.Err() == nil {
		claimed := r.claim(ctx, &wg, KindLogin)
		if backlog || time.Since(lastSide) >= 2*cfg.Poll {
			lastSide = time.Now()
			backlog = r.sideWork(ctx, &wg)
		}
		// Tasks left for want of a slot take the next one, not a check or
		// a refresh.
		if !backlog {
			claimed += r.claim(ctx, &wg, KindDetect)
			claimed += r.claim(ctx, &wg, KindRefresh)
		}
		if claimed == 0 {
			select {
			case <-ctx.Done():
			case <-time.After(cfg.Poll):
			}
		}
	}
	return nil
}

// claim claims work of one kind for the free slots and starts it; it
// returns how many it started.
func (r *runner) claim(ctx context.Context, wg *sync.WaitGroup, kind string) int {
	free := r.cfg.Concurrency - len(r.slots)
	if free <= 0 {
		return 0
	}
	work, err := r.cfg.Client.Claim(ctx, []string{kind}, free)
	if err != nil && ctx.Err() == nil {
		r.cfg.Log.Warn("claim failed", "kind", kind, "error", err)
	}
	for _, w := range work {
		r.slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-r.slots }()
			r.work(ctx, w)
		})
	}
	return len(work)
}

type runner struct {
	cfg   Config
	sites map[int64]Site
	slots chan struct{}

	mu    sync.Mutex
	tasks map[int64]bool // task ids being worked here
}

func (r *runner) work(ctx context.Context, w *Work) {
	site := r.sites[w.MerchantID]
	log := r.cfg.Log.With("work", w.ID, "kind", w.Kind, "merchant_id", w.MerchantID)
	log.Info("work claimed")
	if site == nil {
		log.Error("claimed work of a merchant this connector has no site for")
		return
	}
	// The lease is renewed every few seconds while the work runs, and the
	// work stops when Hitch says it ended (the user left the flow).
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go r.heartbeat(wctx, cancel, w, log)
	switch w.Kind {
	case KindLogin:
		r.login(wctx, site, w, log)
	case KindRefresh:
		r.refresh(wctx, site, w, log)
	case KindDetect:
		r.detect(wctx, site, w, log)
	}
}

func (r *runner) heartbeat(ctx context.Context, cancel context.CancelFunc, w *Work, log *slog.Logger) {
	// A third of the lease, so that two heartbeats may fail before it ends.
	every := 8 * time.Second
	if w.LeaseExpiresAt != nil {
		every = max(time.Until(*w.LeaseExpiresAt)/3, 500*time.Millisecond)
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		status, err := r.cfg.Client.Heartbeat(ctx, w)
		if IsCode(err, "LEASE_NOT_HELD") || status == StepFailed || status == "done" {
			log.Info("work ended at Hitch; stopping", "status", status)
			cancel()
			return
		}
	}
}

func (r *runner) login(ctx context.Context, site Site, w *Work, log *slog.Logger) {
	creds := UserCredentials{}
	if w.Credentials != nil {
		creds = *w.Credentials
	}
	w.Credentials = nil
	started := time.Now()
	sess, err := r.cfg.Pool.NewSession(ctx, browser.SessionOptions{Label: fmt.Sprintf("m%d/login", w.MerchantID),
		Secrets: []string{creds.Password}})
	if err != nil {
		r.step(ctx, w, StepFailed, "", "other", nil, log)
		log.Error("no browser session", "error", err)
		return
	}
	defer sess.Close()
	ask := func(ctx context.Context, kind, question string, retry bool) (string, error) {
		status := StepOTPRequired
		if kind == ChallengeQuestion {
			status = StepQuestionsRequired
		}
		if retry {
			status, question = StepWrongAnswer, ""
		}
		if err := r.cfg.Client.Step(ctx, w, status, question, "", nil); err != nil {
			return "", err
		}
		deadline := time.Now().Add(r.cfg.ChallengeTimeout)
		for time.Now().Before(deadline) {
			answer, ok, err := r.cfg.Client.Answer(ctx, w, 20*time.Second)
			if err != nil {
				return "", err
			}
			if ok {
				sess.AddSecret(answer)
				return answer, nil
			}
		}
		return "", &Failure{Reason: kind + " timeout"}
	}
	err = site.Login(ctx, sess, creds, ask)
	var failure *Failure
	switch {
	case err == nil:
		state, err := sess.SaveState(ctx)
		if err != nil {
			log.Error("save merchant session", "error", err)
			r.step(ctx, w, StepFailed, "", "other", nil, log)
			return
		}
		r.step(ctx, w, StepAuthenticated, "", "", state, log)
		log.Info("login authenticated", "seconds", time.Since(started).Seconds())
	case errors.As(err, &failure):
		r.step(ctx, w, StepFailed, "", failure.Reason, nil, log)
		log.Info("login refused by the merchant", "reason", failure.Reason)
	case ctx.Err() != nil:
		log.Info("login stopped", "error", ctx.Err())
	default:
		r.step(ctx, w, StepFailed, "", "other", nil, log)
		log.Error("login failed", "error", err)
	}
}

func (r *runner) step(ctx context.Context, w *Work, status, question, reason string, state []byte, log *slog.Logger) {
	if err := r.cfg.Client.Step(ctx, w, status, question, reason, state); err != nil {
		log.Warn("report step", "status", status, "error", err)
	}
}

func decodeState(s *string) []byte {
	if s == nil {
		return nil
	}
	b, err := base64.StdEncoding.DecodeString(*s)
	if err != nil {
		return nil
	}
	return b
}

func (r *runner) refresh(ctx context.Context, site Site, w *Work, log *slog.Logger) {
	state := decodeState(w.State)
	if state == nil {
		r.complete(ctx, w, RefreshDisconnected, "no saved session", nil, log)
		return
	}
	sess, err := r.cfg.Pool.NewSession(ctx, browser.SessionOptions{Label: fmt.Sprintf("m%d/refresh", w.MerchantID), State: state})
	if err != nil {
		log.Error("no browser session", "error", err)
		r.complete(ctx, w, RefreshFailed, "browser", nil, log)
		return
	}
	defer sess.Close()
	snap, err := site.Refresh(ctx, sess)
	switch {
	case errors.Is(err, ErrLoggedOut):
		r.complete(ctx, w, RefreshDisconnected, "", nil, log)
		return
	case err != nil:
		log.Warn("refresh failed", "error", err)
		r.complete(ctx, w, RefreshFailed, "merchant", nil, log)
		return
	}
	acct := w.Account()
	if len(snap.Transactions) > 0 {
		if _, err := r.cfg.Client.IngestTransactions(ctx, acct, snap.Transactions); err != nil {
			log.Warn("ingest transactions", "error", err)
			r.complete(ctx, w, RefreshFailed, "ingest", nil, log)
			return
		}
	}
	if len(snap.Subscriptions) > 0 {
		if _, err := r.cfg.Client.IngestSubscriptions(ctx, acct, snap.Subscriptions); err != nil {
			log.Warn("ingest subscriptions", "error", err)
			r.complete(ctx, w, RefreshFailed, "ingest", nil, log)
			return
		}
	}
	newState, err := sess.SaveState(ctx)
	if err != nil {
		newState = nil
	}
	r.complete(ctx, w, RefreshSucceeded, "", newState, log)
}

func (r *runner) complete(ctx context.Context, w *Work, outcome, reason string, state []byte, log *slog.Logger) {
	if err := r.cfg.Client.Complete(ctx, w, outcome, reason, state); err != nil {
		log.Warn("complete refresh", "outcome", outcome, "error", err)
	}
}

// sideWork claims card tasks; it reports whether some were left for want
// of a free slot.
func (r *runner) sideWork(ctx context.Context, wg *sync.WaitGroup) bool {
	tasks, err := r.cfg.Client.PendingTasks(ctx, 20)
	if err != nil && ctx.Err() == nil {
		r.cfg.Log.Warn("list tasks", "error", err)
	}
	for _, t := range tasks {
		r.mu.Lock()
		busy := r.tasks[t.TaskID]
		r.tasks[t.TaskID] = true
		r.mu.Unlock()
		if busy || r.sites[t.MerchantID] == nil {
			continue
		}
		select {
		case r.slots <- struct{}{}:
		default:
			r.forget(t.TaskID)
			return true
		}
		wg.Go(func() {
			defer func() { <-r.slots }()
			defer r.forget(t.TaskID)
			r.task(ctx, t)
		})
	}
	return false
}

// forget ends the runner's note that it works a task.
func (r *runner) forget(id int64) {
	r.mu.Lock()
	delete(r.tasks, id)
	r.mu.Unlock()
}

func (r *runner) task(ctx context.Context, t *Task) {
	log := r.cfg.Log.With("task_id", t.TaskID, "product", t.Product, "merchant_id", t.MerchantID)
	card, state, err := r.cfg.Client.ClaimTask(ctx, t)
	if IsCode(err, "TASK_CLAIMED") {
		return // another connector took it
	}
	if err != nil {
		log.Warn("claim task", "error", err)
		return
	}
	site := r.sites[t.MerchantID]
	secrets := []string{}
	if card != nil {
		secrets = append(secrets, card.Number)
		if card.CVV != nil {
			secrets = append(secrets, *card.CVV)
		}
	}
	result := func(reason string, found *CardSummary) {
		if err := r.cfg.Client.TaskResult(ctx, t, reason, found); err != nil {
			log.Warn("report task", "error", err)
		}
	}
	if state == nil {
		result("session not authenticated", nil)
		return
	}
	sess, err := r.cfg.Pool.NewSession(ctx, browser.SessionOptions{Label: fmt.Sprintf("m%d/%s", t.MerchantID, t.Product),
		State: state, Secrets: secrets})
	if err != nil {
		log.Error("no browser session", "error", err)
		result("other", nil)
		return
	}
	defer sess.Close()
	var failure *Failure
	switch t.Product {
	case "card_switcher":
		err = site.SwitchCard(ctx, sess, card)
		card = nil
		switch {
		case err == nil:
			result("", nil)
		case errors.As(err, &failure):
			result(failure.Reason, nil)
		case errors.Is(err, ErrLoggedOut):
			result("session not authenticated", nil)
		default:
			log.Warn("switch card", "error", err)
			result("could not handle payment method information", nil)
		}
	case "vault":
		found, err := site.CardOnFile(ctx, sess)
		switch {
		case err == nil:
			result("", found)
		case errors.Is(err, ErrLoggedOut):
			result("session not authenticated", nil)
		case errors.As(err, &failure):
			result(failure.Reason, nil)
		default:
			log.Warn("read card on file", "error", err)
			result("could not retrieve payment method information", nil)
		}
	}
}

// detect checks whether the unit's user has an account at the site.
func (r *runner) detect(ctx context.Context, site Site, w *Work, log *slog.Logger) {
	d := w.DetectionRequest()
	w.Detection = nil
	var secrets []string
	for _, v := range []*string{d.Email, d.PhoneNumber, d.ProcessorToken} {
		if v != nil {
			secrets = append(secrets, *v)
		}
	}
	report := func(found *DetectedAccount, reason string) {
		if err := r.cfg.Client.CompleteDetect(ctx, w, found, reason); err != nil {
			log.Warn("complete detect", "error", err)
		}
	}
	sess, err := r.cfg.Pool.NewSession(ctx, browser.SessionOptions{Label: fmt.Sprintf("m%d/detect", w.MerchantID),
		Secrets: secrets})
	if err != nil {
		log.Error("no browser session", "error", err)
		report(nil, "browser")
		return
	}
	defer sess.Close()
	found, err := site.Detect(ctx, sess, d)
	switch {
	case err == nil:
		report(found, "")
	case ctx.Err() != nil:
		log.Info("detect stopped", "error", ctx.Err())
	default:
		log.Warn("detect failed", "error", err)
		report(nil, "merchant")
	}
}
