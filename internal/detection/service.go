package detection

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"

	"github.com/hitchdev/hitch/internal/account"
	"github.com/hitchdev/hitch/internal/connector"
	"github.com/hitchdev/hitch/internal/cursor"
	"github.com/hitchdev/hitch/internal/event"
	"github.com/hitchdev/hitch/internal/field"
	"github.com/hitchdev/hitch/internal/merchant"
	"github.com/hitchdev/hitch/internal/queue"
	"github.com/hitchdev/hitch/internal/seal"
	"github.com/hitchdev/hitch/internal/store"
)

var (
	// ErrInvalidCursor: the cursor is malformed or another user's.
	ErrInvalidCursor = errors.New("detection: invalid cursor")
	// ErrRequestNotFound: no detection request has this id for the
	// developer.
	ErrRequestNotFound = errors.New("detection: request not found")
)

// Config tunes the service.
type Config struct {
	// Environment is the deployment's: in development the simulator works
	// detection requests; in production connectors do.
	Environment string
	// Connectors hands production requests to connectors, one detect unit
	// per merchant a connector declared.
	Connectors *connector.Work
}

func (c Config) development() bool { return c.Environment == "development" }

// Service starts detections, records what they find and answers queries
// about a user's detected accounts.
type Service struct {
	store       store.Store
	box         *seal.Box
	queue       *queue.Queue
	catalog     *merchant.Catalog
	matcher     *Matcher
	simulator   *Simulator
	events      *event.Log
	merchantRef func(int64) *event.Merchant
	now         func() time.Time
	cfg         Config
}

// NewService wires the service; merchantRef gives the event reference (with
// logo) of a catalog merchant.
func NewService(st store.Store, box *seal.Box, q *queue.Queue, catalog *merchant.Catalog, events *event.Log,
	merchantRef func(int64) *event.Merchant, now func() time.Time, cfg Config) *Service {
	return &Service{store: st, box: box, queue: q, catalog: catalog, matcher: NewMatcher(catalog.All()),
		simulator: NewSimulator(catalog), events: events, merchantRef: merchantRef, now: now, cfg: cfg}
}

// Matcher is the service's name matcher over its catalog.
func (s *Service) Matcher() *Matcher { return s.matcher }

// StartParams start a detection for a user.
type StartParams struct {
	ClientID       string
	UserID         string
	ExternalUserID string
	// SessionID is the session whose creation started it, if any: its
	// event then carries session_id.
	SessionID *string
	// Metadata is the session's, echoed in the event as data.metadata.
	Metadata json.RawMessage
	Input    Input
}

// StartTx records a detection request in the caller's transaction ex with
// what works it, so that both commit with the change that caused them: in
// development the simulator's job; in production one detect unit per
// merchant a connector declared, each with the inputs sealed (a request no
// connector can check is done at once, finding nothing).
func (s *Service) StartTx(ctx context.Context, ex store.Executor, p StartParams) (string, error) {
	req := &store.DetectionRequest{ID: uuid.NewString(), ClientID: p.ClientID, UserID: p.UserID, SessionID: p.SessionID,
		Metadata: p.Metadata, CreatedAt: s.now().UTC()}
	req.ProcessorTokenSealed = s.sealInput(p.Input.ProcessorToken, "processor_token", req.ID)
	if s.cfg.development() {
		req.EmailSealed = s.sealInput(p.Input.Email, "email", req.ID)
		req.PhoneSealed = s.sealInput(p.Input.Phone, "phone", req.ID)
	}
	if err := ex.DetectionRequestInsert(ctx, req); err != nil {
		return "", fmt.Errorf("detection: start: %w", err)
	}
	if s.cfg.development() {
		if err := s.queue.InsertTx(ctx, ex, []river.InsertManyParams{
			{Args: DetectArgs{ClientID: p.ClientID, RequestID: req.ID}},
		}); err != nil {
			return "", fmt.Errorf("detection: start: %w", err)
		}
		return req.ID, nil
	}
	queued := 0
	if s.cfg.Connectors != nil {
		var err error
		queued, err = s.cfg.Connectors.DetectTx(ctx, ex, connector.DetectParams{ClientID: p.ClientID,
			ExternalUserID: p.ExternalUserID, RequestID: req.ID, Input: connector.DetectionInput{Email: p.Input.Email,
				PhoneNumber: p.Input.Phone, ProcessorToken: p.Input.ProcessorToken}})
		if err != nil {
			return "", fmt.Errorf("detection: start: %w", err)
		}
	}
	if queued == 0 {
		if _, err := ex.DetectionRequestSettle(ctx, p.ClientID, req.ID, s.now().UTC()); err != nil {
			return "", fmt.Errorf("detection: start: %w", err)
		}
	}
	return req.ID, nil
}

// Start detects for the user with this external id, created on first
// sight as a session would create it (POST /detect).
func (s *Service) Start(ctx context.Context, clientID, externalUserID string, in Input) (string, error) {
	var id string
	err := s.store.InTx(ctx, func(ex store.Executor) error {
		u, err := ex.UserGetOrCreate(ctx, &store.UserGetOrCreateParams{ID: uuid.NewString(), ClientID: clientID,
			ExternalUserID: externalUserID, CreatedAt: s.now().UTC()})
		if err != nil {
			return err
		}
		id, err = s.StartTx(ctx, ex, StartParams{ClientID: clientID, UserID: u.ID, ExternalUserID: externalUserID, Input: in})
		return err
	})
	return id, err
}

// sealPurpose binds a sealed input to its request and kind, so that one
// cannot be passed off as another.
func sealPurpose(kind, requestID string) string { return "detection_" + kind + ":" + requestID }

func (s *Service) sealInput(v, kind, requestID string) []byte {
	if v == "" {
		return nil
	}
	return s.box.Seal([]byte(v), sealPurpose(kind, requestID))
}

func (s *Service) openInput(sealed []byte, kind, requestID string) (string, error) {
	if sealed == nil {
		return "", nil
	}
	b, err := s.box.Open(sealed, sealPurpose(kind, requestID))
	if err != nil {
		return "", fmt.Errorf("detection: open %s: %w", kind, err)
	}
	return string(b), nil
}

// input opens a request's sealed inputs.
func (s *Service) input(req *store.DetectionRequest) (Input, error) {
	var in Input
	var err error
	if in.Email, err = s.openInput(req.EmailSealed, "email", req.ID); err != nil {
		return in, err
	}
	if in.Phone, err = s.openInput(req.PhoneSealed, "phone", req.ID); err != nil {
		return in, err
	}
	in.ProcessorToken, err = s.openInput(req.ProcessorTokenSealed, "processor_token", req.ID)
	return in, err
}

// RecordParams are accounts a source found for a user.
type RecordParams struct {
	ClientID string
	// ExternalUserID names the user; RequestID, when set, names the
	// request that found them (and its user), which is then done unless
	// detect units of connectors are still working on it.
	ExternalUserID string
	RequestID      string
	Found          []Found
}

// Recorded is what one report changed.
type Recorded struct {
	// New are the detections that were not known before, in report order;
	// Unchanged counts the rest.
	New       []*store.DetectedAccount
	Unchanged int
	// Event is the NEW_DETECTED_ACCOUNTS_AVAILABLE event recorded, nil when
	// nothing was new.
	Event *store.Event
}

// prepared is a reported account resolved against the catalog.
type prepared struct {
	found      Found
	merchantID *int64
	name, key  string
}

// Record stores the accounts found for a user. An account detected before
// (the same catalog merchant, or a name matching one already detected)
// changes nothing; when any is new, one NEW_DETECTED_ACCOUNTS_AVAILABLE
// event announces the new ones. Everything commits together.
func (s *Service) Record(ctx context.Context, p RecordParams) (*Recorded, error) {
	var out *Recorded
	err := s.store.InTx(ctx, func(ex store.Executor) error {
		var err error
		out, err = s.RecordTx(ctx, ex, p)
		return err
	})
	return out, err
}

// SettleTx ends, in ex, a connector's detect unit that found nothing or
// failed: its request is done when it was the last unit working on it.
func (s *Service) SettleTx(ctx context.Context, ex store.Executor, wk *store.Work) error {
	if wk.RequestID == nil {
		return nil
	}
	_, err := s.RecordTx(ctx, ex, RecordParams{ClientID: wk.ClientID, RequestID: *wk.RequestID})
	if errors.Is(err, ErrRequestNotFound) || errors.Is(err, account.ErrUserNotFound) {
		return nil // deleted with its user meanwhile
	}
	return err
}

// RecordTx is Record in the caller's transaction. A detect unit of a
// connector ends (store.Executor.WorkReport) before RecordTx in the same
// transaction: RecordTx takes the user's row first, so of two last units
// ending at once the second sees the first and settles the request.
func (s *Service) RecordTx(ctx context.Context, ex store.Executor, p RecordParams) (*Recorded, error) {
	items, err := s.prepare(p.Found)
	if err != nil {
		return nil, err
	}
	out := &Recorded{}
	u, req, err := s.recordTarget(ctx, ex, p)
	if err != nil {
		return nil, err
	}
	// Reserving no position takes the user's row first: a concurrent
	// report waits here, then reads the keys this one commits, so a
	// near-miss name cannot slip past the fuzzy check twice.
	if _, err := ex.UserDetectionPositions(ctx, p.ClientID, u.ID, 0); err != nil {
		return nil, err
	}
	known, err := ex.DetectedAccountKeys(ctx, p.ClientID, u.ID)
	if err != nil {
		return nil, err
	}
	var fresh []prepared
	for _, it := range items {
		if s.known(known, it.key) {
			out.Unchanged++
			continue
		}
		known[it.key] = true
		fresh = append(fresh, it)
	}
	now := s.now().UTC()
	if len(fresh) > 0 {
		last, err := ex.UserDetectionPositions(ctx, p.ClientID, u.ID, int64(len(fresh)))
		if err != nil {
			return nil, err
		}
		for i, it := range fresh {
			d := &store.DetectedAccount{ID: uuid.NewString(), ClientID: p.ClientID, UserID: u.ID,
				MerchantID: it.merchantID, Name: it.name, NameKey: it.key, LoginMethod: it.found.LoginMethod,
				AccountCreatedAt: utcPtr(it.found.AccountCreatedAt), Source: it.found.Source,
				Position: last - int64(len(fresh)) + int64(i) + 1, DetectedAt: now}
			inserted, err := ex.DetectedAccountInsert(ctx, d)
			if err != nil {
				return nil, err
			}
			if inserted {
				out.New = append(out.New, d)
			} else { // another report of the same account committed first
				out.Unchanged++
			}
		}
	}
	if len(out.New) > 0 {
		if out.Event, err = s.announce(ctx, ex, u, req, out.New, now); err != nil {
			return nil, err
		}
	}
	if req != nil {
		// A report after the request is done still adds what is new.
		if err := ex.DetectionRequestFound(ctx, p.ClientID, req.ID, len(out.New)); err != nil {
			return nil, err
		}
		if _, err := ex.DetectionRequestSettle(ctx, p.ClientID, req.ID, now); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// recordTarget resolves the user (and request) a report is about.
func (s *Service) recordTarget(ctx context.Context, ex store.Executor, p RecordParams) (*store.User, *store.DetectionRequest, error) {
	var req *store.DetectionRequest
	if p.RequestID != "" {
		var err error
		req, err = ex.DetectionRequestGet(ctx, p.ClientID, p.RequestID)
		if errors.Is(err, store.ErrNotFound) {
			return nil, nil, ErrRequestNotFound
		} else if err != nil {
			return nil, nil, err
		}
		if p.ExternalUserID == "" {
			p.ExternalUserID = req.ExternalUserID
		} else if p.ExternalUserID != req.ExternalUserID {
			return nil, nil, field.Invalid("external_user_id", "is not the user of the request")
		}
	}
	u, err := ex.UserGet(ctx, p.ClientID, p.ExternalUserID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil, account.ErrUserNotFound
	} else if err != nil {
		return nil, nil, err
	}
	return u, req, nil
}

// known reports whether a detection with this key, or for an unsupported
// merchant a name within matching distance of it, is among keys.
func (s *Service) known(keys map[string]bool, key string) bool {
	if keys[key] {
		return true
	}
	for k := range keys {
		if isMerchantKey(k) {
			continue
		}
		// A merchant detected by name before the catalog took it in is the
		// same account as the catalog merchant now.
		if isMerchantKey(key) {
			if id, ok := s.matcher.Resolve(k); ok && merchantKey(id) == key {
				return true
			}
		} else if _, near := keyDistance(k, key); near {
			return true
		}
	}
	return false
}

func merchantKey(id int64) string { return "#" + strconv.FormatInt(id, 10) }

func isMerchantKey(k string) bool { return len(k) > 0 && k[0] == '#' }

// prepare checks and resolves a report: a name that is a catalog merchant's
// becomes that merchant, and the report's duplicates are dropped.
func (s *Service) prepare(found []Found) ([]prepared, error) {
	items := make([]prepared, 0, len(found))
	seen := map[string]bool{}
	for i, f := range found {
		it := prepared{found: f}
		if err := ValidateFound(fmt.Sprintf("accounts[%d]", i), &f); err != nil {
			return nil, err
		}
		id := f.MerchantID
		if id == 0 {
			if r, ok := s.matcher.Resolve(f.Name); ok {
				id = r
			}
		}
		if id != 0 {
			m, ok := s.catalog.Get(id)
			if !ok {
				return nil, field.Invalid(fmt.Sprintf("accounts[%d].merchant_id", i), "is not a catalog merchant")
			}
			it.merchantID, it.name, it.key = &id, m.Name, merchantKey(id)
		} else {
			it.name, it.key = f.Name, merchant.NameKey(f.Name)
		}
		if seen[it.key] {
			continue
		}
		seen[it.key] = true
		items = append(items, it)
	}
	return items, nil
}

// MaxNameLength bounds a reported account's name.
const MaxNameLength = 255

// ValidateFound checks a reported account; at names it in errors.
func ValidateFound(at string, f *Found) error {
	path := func(name string) string { return at + "." + name }
	switch {
	case f.MerchantID < 0:
		return field.Invalid(path("merchant_id"), "must be a positive integer")
	case f.MerchantID == 0 && merchant.NameKey(f.Name) == "":
		return field.Invalid(path("name"), "must name a merchant (letters or digits) when merchant_id is absent")
	case len(f.Name) > MaxNameLength:
		return field.Invalid(path("name"), fmt.Sprintf("must be at most %d bytes", MaxNameLength))
	}
	switch f.Source {
	case SourceEmail, SourcePhone, SourceProcessorToken:
	default:
		return field.Invalid(path("source"), "must be email, phone or processor_token")
	}
	switch f.LoginMethod {
	case "", LoginGoogleSSO, LoginAppleSSO, LoginPassword:
	default:
		return field.Invalid(path("login_method"), "must be GOOGLE_SSO, APPLE_SSO, PASSWORD or empty")
	}
	return nil
}

func utcPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC().Truncate(time.Microsecond)
	return &u
}

// detectedRef is an account in NEW_DETECTED_ACCOUNTS_AVAILABLE's
// data.detected_accounts: a catalog merchant's reference.
type detectedRef struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
	Logo string `json:"logo,omitempty"`
}

// unsupportedRef is an account at a merchant not in the catalog, in
// Hitch's data.unsupported_accounts.
type unsupportedRef struct {
	Name string `json:"name"`
}

// announce records the event of new detections, with the session id and
// metadata of the request's session, if any.
func (s *Service) announce(ctx context.Context, ex store.Executor, u *store.User, req *store.DetectionRequest,
	fresh []*store.DetectedAccount, now time.Time) (*store.Event, error) {
	var sessionID *string
	var metadata map[string]string
	if req != nil {
		sessionID = req.SessionID
		if req.Metadata != nil {
			if err := json.Unmarshal(req.Metadata, &metadata); err != nil {
				return nil, fmt.Errorf("detection: request metadata: %w", err)
			}
		}
	}
	detected := []detectedRef{}
	unsupported := []unsupportedRef{}
	for _, d := range fresh {
		if d.MerchantID == nil {
			unsupported = append(unsupported, unsupportedRef{Name: d.Name})
			continue
		}
		ref := s.merchantRef(*d.MerchantID)
		detected = append(detected, detectedRef{ID: ref.ID, Name: ref.Name, Logo: ref.Logo})
	}
	return s.events.Record(ctx, ex, event.Params{ClientID: u.ClientID, User: u, Type: event.NewDetectedAccountsAvailable,
		SessionID: sessionID, Metadata: metadata, At: now,
		Data: map[string]any{"detected_accounts": detected, "unsupported_accounts": unsupported}})
}

// SearchResult is whether a user has an account at a named merchant.
type SearchResult struct {
	// Name is the name asked about, as given.
	Name       string
	Detected   bool
	DetectedAt *time.Time
}

// Search tells, for each name in order, whether the user has a detected
// account at that merchant (see docs/detection.md for how names match).
// Linked accounts count: detection is about what the user has.
func (s *Service) Search(ctx context.Context, clientID, externalUserID string, names []string) ([]SearchResult, error) {
	u, err := s.user(ctx, clientID, externalUserID)
	if err != nil {
		return nil, err
	}
	all, err := s.store.DetectedAccountList(ctx, &store.DetectedAccountListParams{ClientID: clientID, UserID: u.ID})
	if err != nil {
		return nil, err
	}
	byMerchant := map[int64]*store.DetectedAccount{}
	var unsupported []*store.DetectedAccount
	for _, d := range all {
		if d.MerchantID != nil {
			byMerchant[*d.MerchantID] = d
		} else {
			unsupported = append(unsupported, d)
		}
	}
	out := make([]SearchResult, len(names))
	for i, name := range names {
		out[i] = SearchResult{Name: name}
		var hit *store.DetectedAccount
		if id, ok := s.matcher.Resolve(name); ok {
			hit = byMerchant[id]
		}
		// A name-only detection answers too: for a merchant not in the
		// catalog, or one detected by name before the catalog took it in.
		if key := merchant.NameKey(name); hit == nil && key != "" {
			hit = closest(unsupported, key)
		}
		if hit != nil {
			at := hit.DetectedAt
			out[i].Detected, out[i].DetectedAt = true, &at
		}
	}
	return out, nil
}

// closest returns the detection whose name key is nearest key, within
// matching distance; nil when none is.
func closest(ds []*store.DetectedAccount, key string) *store.DetectedAccount {
	var best *store.DetectedAccount
	bestDist := 0
	for _, d := range ds {
		if dist, near := keyDistance(d.NameKey, key); near && (best == nil || dist < bestDist) {
			best, bestDist = d, dist
		}
	}
	return best
}

func (s *Service) user(ctx context.Context, clientID, externalUserID string) (*store.User, error) {
	u, err := s.store.UserGet(ctx, clientID, externalUserID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, account.ErrUserNotFound
	}
	return u, err
}

// Detected is a detected account as the queries return it.
type Detected struct {
	*store.DetectedAccount
	// Merchant is the catalog merchant's reference, nil for a merchant not
	// in the catalog.
	Merchant *event.Merchant
}

// Get lists the user's detected accounts that are not linked, oldest
// detection first; merchantID limits it to one merchant when not zero.
func (s *Service) Get(ctx context.Context, clientID, externalUserID string, merchantID int64) ([]Detected, error) {
	u, err := s.user(ctx, clientID, externalUserID)
	if err != nil {
		return nil, err
	}
	ds, err := s.store.DetectedAccountList(ctx, &store.DetectedAccountListParams{ClientID: clientID, UserID: u.ID,
		MerchantID: merchantID, Unlinked: true})
	if err != nil {
		return nil, err
	}
	return s.withMerchants(ds), nil
}

func (s *Service) withMerchants(ds []*store.DetectedAccount) []Detected {
	out := make([]Detected, len(ds))
	for i, d := range ds {
		out[i].DetectedAccount = d
		if d.MerchantID != nil {
			out[i].Merchant = s.merchantRef(*d.MerchantID)
		}
	}
	return out
}

// Page is one page of a cursor listing.
type Page struct {
	Accounts []Detected
	// NextCursor continues the listing; nil as ListPage and SyncPage say.
	NextCursor *string
}

// Page limits of the listings.
const (
	DefaultPageLimit = 100
	MaxPageLimit     = 100
)

// ListPage is a page of the user's detected accounts that are not linked,
// in detection order (POST /detected-accounts/list). NextCursor is nil on
// the last page.
func (s *Service) ListPage(ctx context.Context, clientID, externalUserID, after string, limit int) (*Page, error) {
	ds, u, err := s.page(ctx, clientID, externalUserID, after, limit+1, &store.DetectedAccountListParams{Unlinked: true})
	if err != nil {
		return nil, err
	}
	p := &Page{}
	if len(ds) > limit {
		ds = ds[:limit]
		c := cursor.Encode(u.ID, ds[len(ds)-1].Position)
		p.NextCursor = &c
	}
	p.Accounts = s.withMerchants(ds)
	return p, nil
}

// SyncPage is a page of the user's detections at catalog merchants after
// the cursor, as transaction sync pages are (POST /detected-accounts/sync):
// NextCursor is the position after the page, nil when the page is empty.
func (s *Service) SyncPage(ctx context.Context, clientID, externalUserID, after string, limit int) (*Page, error) {
	ds, u, err := s.page(ctx, clientID, externalUserID, after, limit, &store.DetectedAccountListParams{CatalogOnly: true})
	if err != nil {
		return nil, err
	}
	p := &Page{Accounts: s.withMerchants(ds)}
	if len(ds) > 0 {
		c := cursor.Encode(u.ID, ds[len(ds)-1].Position)
		p.NextCursor = &c
	}
	return p, nil
}

func (s *Service) page(ctx context.Context, clientID, externalUserID, after string, limit int,
	params *store.DetectedAccountListParams) ([]*store.DetectedAccount, *store.User, error) {
	u, err := s.user(ctx, clientID, externalUserID)
	if err != nil {
		return nil, nil, err
	}
	if after != "" {
		if params.After, err = decodeCursor(after, u.ID); err != nil {
			return nil, nil, err
		}
	}
	params.ClientID, params.UserID, params.Limit = clientID, u.ID, limit
	ds, err := s.store.DetectedAccountList(ctx, params)
	return ds, u, err
}

// decodeCursor reads a cursor of the user userID: another user's (or
// developer's) cursor is as invalid as a malformed one.
func decodeCursor(s, userID string) (int64, error) {
	p, ok := cursor.Decode(s, userID)
	if !ok {
		return 0, ErrInvalidCursor
	}
	return p, nil
}
