// Package store is the storage seam of Hitch: an Executor of NounVerb
// methods that runs against a pool or inside a database transaction, with one
// implementation per SQL dialect (SQLite and PostgreSQL).
package store

import (
	"context"
	"encoding/json"
	"errors"
	"time"
)

// ErrNotFound is returned by any method that looks up a single row that does
// not exist. Drivers translate their own no-rows errors into it.
var ErrNotFound = errors.New("not found")

// ErrConflict is returned when a write violates a uniqueness rule.
var ErrConflict = errors.New("conflict")

// ErrUnavailable wraps an error of a database that cannot be reached or
// cannot serve for now (PostgreSQL down or refusing connections, a SQLite
// file locked by another process past the busy timeout): the same call may
// succeed later, and the pool reconnects by itself.
var ErrUnavailable = errors.New("database unavailable")

// ErrInvalidText is returned, before the database sees it, for a string
// argument holding a NUL or invalid UTF-8: PostgreSQL's text holds
// neither and SQLite's holds both, so both stores refuse it alike.
var ErrInvalidText = errors.New("text holds a NUL or invalid UTF-8")

// Store is an open database: an Executor on the connection pool plus
// transactions, health and migrations.
type Store interface {
	Executor

	// InTx runs fn in one database transaction, committing when fn returns
	// nil and rolling back otherwise.
	InTx(ctx context.Context, fn func(Executor) error) error

	// Dialect names the engine: "sqlite" or "postgres".
	Dialect() string

	// Ping checks that the database answers.
	Ping(ctx context.Context) error

	// Migrate applies every pending migration.
	Migrate(ctx context.Context) error

	// MigrationVersion reports the applied and the latest known migration.
	MigrationVersion(ctx context.Context) (applied, latest int, err error)

	// Native is the engine's own pool, for libraries that keep their tables
	// in the same database (River): SQLite's writer *sql.DB or a
	// *pgxpool.Pool, with the PostgreSQL schema in use ("" for the default).
	Native() (pool any, schema string)

	// InMigrationTx runs fn in a transaction holding the migration lock,
	// with the native transaction (*sql.Tx or pgx.Tx), so that another
	// library's migrations are applied one node at a time too.
	InMigrationTx(ctx context.Context, fn func(rawTx any) error) error

	Close() error
}

// Executor is every query Hitch makes. Each method is scoped by the tenant
// (ClientID) where the data belongs to one.
type Executor interface {
	ClientInsert(ctx context.Context, params *ClientInsertParams) (*Client, error)
	ClientGetByID(ctx context.Context, id string) (*Client, error)
	ClientList(ctx context.Context) ([]*Client, error)
	ClientCount(ctx context.Context) (int, error)

	ClientSecretInsert(ctx context.Context, params *ClientSecretInsertParams) error
	// ClientSecretExpireCurrent gives every secret of the client that has no
	// expiry yet the expiry expiresAt (used by rotation's grace period).
	ClientSecretExpireCurrent(ctx context.Context, clientID string, expiresAt time.Time) error
	// ClientSecretListLive lists the client's secrets that have not expired
	// at now.
	ClientSecretListLive(ctx context.Context, clientID string, now time.Time) ([]*ClientSecret, error)

	UserGetOrCreate(ctx context.Context, params *UserGetOrCreateParams) (*User, error)
	UserGet(ctx context.Context, clientID, externalUserID string) (*User, error)
	// UserAccountsVersion returns a user's id and the version of its
	// accounts, which every change to them bumps (ErrNotFound for an
	// unknown user).
	UserAccountsVersion(ctx context.Context, clientID, externalUserID string) (userID string, version int64, err error)
	// UserNextEventSequence increments and returns the user's event sequence.
	UserNextEventSequence(ctx context.Context, clientID, userID string) (int64, error)

	SessionInsert(ctx context.Context, params *SessionInsertParams) (*Session, error)
	SessionGetByTokenHash(ctx context.Context, clientID string, tokenHash []byte) (*Session, error)
	// SessionGet finds a session by its public id (a UUID in canonical form).
	SessionGet(ctx context.Context, clientID, id string) (*Session, error)
	SessionUpdateExpiry(ctx context.Context, params *SessionUpdateExpiryParams) (*Session, error)

	// AccountLink inserts the user's account at a merchant, or links again
	// and reconnects one that exists (unlinked or disconnected).
	AccountLink(ctx context.Context, params *AccountLinkParams) (*Account, error)
	// AccountList lists the user's linked accounts, with the lifecycle of
	// product (or of the most recent attempt of any product when empty), in
	// link order. It leaves ID and UserID empty: it is the hottest read, and
	// listing does not use them.
	AccountList(ctx context.Context, params *AccountListParams) ([]*Account, error)
	// AccountGet returns one linked account, as AccountList does.
	AccountGet(ctx context.Context, params *AccountGetParams) (*Account, error)
	AccountUnlink(ctx context.Context, params *AccountRef) error
	// AccountSetConnection moves a linked account to Status. changed is false
	// when it already had that status (so concurrent callers see exactly one
	// change); ErrNotFound when the user has no linked account there.
	AccountSetConnection(ctx context.Context, params *AccountSetConnectionParams) (account *Account, changed bool, err error)
	// AccountLifecycleSet records the status of the latest login attempt of
	// one product on an account, and the account's last user action.
	AccountLifecycleSet(ctx context.Context, params *AccountLifecycleSetParams) error
	// AccountActionSet records how a product's last user action ended,
	// without changing its lifecycle (a card switch ending after its login).
	AccountActionSet(ctx context.Context, params *AccountActionSetParams) error
	// AccountAddScope adds a scope to a connected, linked account;
	// ErrNotFound when there is none.
	AccountAddScope(ctx context.Context, clientID, accountID, scope string, now time.Time) error

	EventInsert(ctx context.Context, params *EventInsertParams) (*Event, error)
	EventGet(ctx context.Context, clientID, id string) (*Event, error)
	// EventList lists the client's events newest first, filtered and paged
	// by params.
	EventList(ctx context.Context, params *EventListParams) ([]*Event, error)

	WebhookEndpointInsert(ctx context.Context, endpoint *WebhookEndpoint) error
	WebhookEndpointGet(ctx context.Context, clientID, id string) (*WebhookEndpoint, error)
	// WebhookEndpointList lists the client's endpoints, oldest first.
	WebhookEndpointList(ctx context.Context, clientID string) ([]*WebhookEndpoint, error)
	WebhookEndpointDelete(ctx context.Context, clientID, id string) error
	// WebhookEndpointRotateSecret makes the current secret the previous one,
	// valid until params.PreviousExpiresAt, and stores the new one.
	WebhookEndpointRotateSecret(ctx context.Context, params *WebhookEndpointRotateSecretParams) (*WebhookEndpoint, error)
	// WebhookEndpointUpdate sets the endpoint's URL and event filter where
	// params give them; a changed URL clears failing_since (the failures
	// were the old URL's).
	WebhookEndpointUpdate(ctx context.Context, params *WebhookEndpointUpdateParams) (*WebhookEndpoint, error)
	// WebhookEndpointDisable disables an enabled endpoint; changed is false
	// when it was disabled already.
	WebhookEndpointDisable(ctx context.Context, clientID, id, reason string, now time.Time) (changed bool, err error)
	// WebhookEndpointSetFailing records that deliveries to the endpoint fail
	// since failingSince (kept if already set), or succeed again when nil.
	// It returns the time failures began, nil when they have stopped.
	WebhookEndpointSetFailing(ctx context.Context, clientID, id string, failingSince *time.Time) (*time.Time, error)

	// AccountTransactionPositions reserves n sync positions on the account
	// and returns the last; the reservation holds the account's row until
	// the transaction ends, so positions commit in order.
	AccountTransactionPositions(ctx context.Context, clientID, accountID string, n int64) (last int64, err error)
	// TransactionDigests returns the stored digests of the account's
	// transactions among externalIDs, by external id.
	TransactionDigests(ctx context.Context, clientID, accountID string, externalIDs []string) (map[string]StoredDigest, error)
	TransactionInsertMany(ctx context.Context, rows []*TransactionRow) error
	// TransactionUpdate replaces a transaction's digest and documents.
	TransactionUpdate(ctx context.Context, row *TransactionRow) error
	// TransactionPage returns up to limit of the account's transactions
	// after position after, in position order.
	TransactionPage(ctx context.Context, clientID, accountID string, after int64, limit int) ([]TransactionPageRow, error)
	// AccountTransactionsVersion returns the id of a user's linked account
	// at a merchant and the version of its transactions (ErrNotFound when
	// the user has none there).
	AccountTransactionsVersion(ctx context.Context, clientID, externalUserID string, merchantID int64) (accountID string, version int64, err error)
	// TransactionGet returns a transaction's lookup document.
	TransactionGet(ctx context.Context, clientID, id string) ([]byte, error)
	SubscriptionDigests(ctx context.Context, clientID, accountID string, externalIDs []string) (map[string]StoredDigest, error)
	SubscriptionInsert(ctx context.Context, row *SubscriptionRow) error
	SubscriptionUpdate(ctx context.Context, row *SubscriptionRow) error
	// SubscriptionGet returns a subscription's document.
	SubscriptionGet(ctx context.Context, clientID, id string) ([]byte, error)
	// SubscriptionIDs lists the ids of an account's subscriptions, oldest
	// first.
	SubscriptionIDs(ctx context.Context, clientID, accountID string) ([]string, error)

	WebhookAttemptInsert(ctx context.Context, attempt *WebhookAttempt) error
	// WebhookAttemptList lists the attempts to deliver one event, in the
	// order they started.
	WebhookAttemptList(ctx context.Context, clientID, eventID string) ([]*WebhookAttempt, error)
	// JWEKeyInsert stores a key; ErrConflict when Bootstrap is set and a
	// bootstrap key exists already.
	JWEKeyInsert(ctx context.Context, params *JWEKeyInsertParams) (*JWEKey, error)
	// JWEKeyListUsable lists keys not retired at now, newest first.
	JWEKeyListUsable(ctx context.Context, now time.Time) ([]*JWEKey, error)
	// JWEKeyList lists every key, retired or not, newest first.
	JWEKeyList(ctx context.Context) ([]*JWEKey, error)
	// JWEKeyRetireOthers sets every other key to retire at retiresAt (or
	// sooner, if it already would) and erases the private half of keys
	// retired at now.
	JWEKeyRetireOthers(ctx context.Context, kid string, retiresAt, now time.Time) error

	// Tasks: the work a login starts at a merchant.

	// TaskInsert stores a task; ErrConflict when its id is taken, which
	// leaves a transaction usable.
	TaskInsert(ctx context.Context, task *Task) error
	TaskGet(ctx context.Context, clientID string, id int64) (*Task, error)
	// TaskAttachCard moves a task awaiting its card, before its deadline, to
	// pending with the card's summary; ErrNotFound when no such task.
	TaskAttachCard(ctx context.Context, params *TaskAttachCardParams) (*Task, error)
	// TaskSeal stores a pending task's sealed card.
	TaskSeal(ctx context.Context, clientID string, id int64, sealed []byte) error
	// TaskFinish ends an unfinished task (of state params.From when set) and
	// erases its sealed card; ErrNotFound when no such task.
	TaskFinish(ctx context.Context, params *TaskFinishParams) (*Task, error)
	// TaskListPending lists pending tasks no connector has claimed, of every
	// developer, oldest first.
	TaskListPending(ctx context.Context, params *TaskListPendingParams) ([]*Task, error)
	// TaskClaim gives a pending task to one connector: it returns the task
	// with its sealed card and erases the card from the row. ErrNotFound
	// when the task is not pending or was claimed already.
	TaskClaim(ctx context.Context, clientID string, id int64, now time.Time) (*Task, error)
	// TaskListSimulations lists pending tasks the development simulator has
	// still to end, of every developer, oldest first.
	TaskListSimulations(ctx context.Context, params *TaskListSimulationsParams) ([]*Task, error)

	// Detection: the merchant accounts found for a user, and the requests
	// that look for them.

	DetectionRequestInsert(ctx context.Context, req *DetectionRequest) error
	DetectionRequestGet(ctx context.Context, clientID, id string) (*DetectionRequest, error)
	// DetectionRequestFound adds n accounts found new to a request.
	DetectionRequestFound(ctx context.Context, clientID, id string, n int) error
	// DetectionRequestSettle marks a pending request done when none of its
	// detect work is pending or claimed, and then erases its sealed e-mail
	// and phone number (a processor token stays, for connectors that come
	// back to aggregator data). It reports whether it did.
	DetectionRequestSettle(ctx context.Context, clientID, id string, now time.Time) (bool, error)
	// UserDetectionPositions reserves n detection positions for the user
	// and returns the last; like AccountTransactionPositions it holds the
	// user's row until the transaction ends, so positions commit in order.
	UserDetectionPositions(ctx context.Context, clientID, userID string, n int64) (last int64, err error)
	// DetectedAccountKeys returns the name keys the user has detections
	// for.
	DetectedAccountKeys(ctx context.Context, clientID, userID string) (map[string]bool, error)
	// DetectedAccountInsert stores a detection unless the user has one with
	// its name key already; inserted reports which.
	DetectedAccountInsert(ctx context.Context, account *DetectedAccount) (inserted bool, err error)
	// DetectedAccountList lists a user's detections in position order.
	DetectedAccountList(ctx context.Context, params *DetectedAccountListParams) ([]*DetectedAccount, error)

	// Link challenges: the hosted flow's login steps awaiting an answer.

	LinkChallengeInsert(ctx context.Context, c *LinkChallenge) error
	// LinkChallengeAttempt counts one answer to a live challenge of the
	// session and returns the answers counted so far; ErrNotFound when it
	// is unknown, another session's, spent, expired or has had max.
	LinkChallengeAttempt(ctx context.Context, clientID, id, sessionID string, max int, now time.Time) (attempts int, err error)
	// LinkChallengeSpend spends a challenge; spent is false when it was
	// spent already (a concurrent answer won).
	LinkChallengeSpend(ctx context.Context, clientID, id string) (spent bool, err error)

	// SessionLoginFailureReserve counts a failed login of the hosted flow
	// for the session before the login is tried, unless it has max
	// already; reserved is false then. One conditional UPDATE: concurrent
	// logins each take their own count.
	SessionLoginFailureReserve(ctx context.Context, clientID, sessionID string, max int) (reserved bool, err error)
	// SessionLoginFailureRelease takes back a reserved count: the login
	// did not fail on its credentials.
	SessionLoginFailureRelease(ctx context.Context, clientID, sessionID string) error

	// MasterKeyCheck stores sealed as the database's master key check value
	// unless one exists, and returns the stored one.
	MasterKeyCheck(ctx context.Context, sealed []byte) ([]byte, error)

	// Connectors: the credentials of the internal ingestion API.

	// ConnectorInsert stores a connector; ErrConflict when its id is taken.
	ConnectorInsert(ctx context.Context, connector *Connector) error
	// ConnectorGet returns a connector, revoked or not.
	ConnectorGet(ctx context.Context, id string) (*Connector, error)
	// ConnectorList lists every connector, oldest first.
	ConnectorList(ctx context.Context) ([]*Connector, error)
	// ConnectorRevoke sets a connector's revoked_at to at unless it is
	// revoked already; ErrNotFound when there is no such connector.
	ConnectorRevoke(ctx context.Context, id string, at time.Time) error
	// ConnectorDeclare records the merchants a connector serves and that it
	// was seen at at.
	ConnectorDeclare(ctx context.Context, id string, merchantIDs []int64, at time.Time) error
	// ConnectorSeen records that a connector called Hitch at at.
	ConnectorSeen(ctx context.Context, id string, at time.Time) error

	// Connector work: logins and refreshes waiting for, or held by, a
	// connector, and the merchant sessions connectors keep per account.

	// WorkInsert stores a unit of work; a refresh of an account that has
	// one open already is not stored (inserted is false).
	WorkInsert(ctx context.Context, w *Work) (inserted bool, err error)
	// WorkGet returns a unit of work.
	WorkGet(ctx context.Context, id string) (*Work, error)
	// WorkClaim gives pending work of the merchants and kinds to a
	// connector under a lease, oldest first, and erases the sealed input of
	// what it returns (the returned rows still hold it).
	WorkClaim(ctx context.Context, p *WorkClaimParams) ([]*Work, error)
	// WorkReport moves work held under the lease (not expired at Now) from
	// one of the From statuses to Status, renewing the lease to LeaseUntil;
	// ErrNotFound when the lease or status does not match.
	WorkReport(ctx context.Context, p *WorkReportParams) (*Work, error)
	// WorkTakeAnswer returns the sealed answer of work held under the lease
	// and back in status claimed, erasing it; ErrNotFound when there is no
	// answer (or the lease does not match).
	WorkTakeAnswer(ctx context.Context, p *WorkReportParams) ([]byte, error)
	// WorkSet moves work from one of the From statuses to Status without a
	// lease (the hosted flow and the reaper), storing input (nil erases
	// it) and reason; ErrNotFound when its status is not one of From.
	WorkSet(ctx context.Context, p *WorkSetParams) (*Work, error)
	// WorkExpired lists work whose lease ended before now, or pending since
	// before pendingBefore, up to limit.
	WorkExpired(ctx context.Context, now, pendingBefore time.Time, limit int) ([]*Work, error)
	// WorkPurge deletes ended work created before before and erases the
	// sealed input of any work created before eraseBefore.
	WorkPurge(ctx context.Context, before, eraseBefore time.Time) error
	// WorkStats counts work per connector, kind and status since since.
	WorkStats(ctx context.Context, since time.Time) ([]*WorkCount, error)

	// ConnectorStatePut stores an account's sealed merchant session (nil
	// keeps the stored one) and when the account is next refreshed.
	ConnectorStatePut(ctx context.Context, s *ConnectorState) error
	// ConnectorStateGet returns an account's connector state.
	ConnectorStateGet(ctx context.Context, clientID, externalUserID string, merchantID int64) (*ConnectorState, error)
	// ConnectorStateDelete forgets an account's merchant session.
	ConnectorStateDelete(ctx context.Context, clientID, externalUserID string, merchantID int64) error
	// ConnectorStatesDue lists the states of connected, linked accounts due
	// for a refresh at now, up to limit, and moves their next refresh to
	// next. A refresh planned after next (the interval was shortened since)
	// is due too.
	ConnectorStatesDue(ctx context.Context, now, next time.Time, limit int) ([]*ConnectorState, error)

	// The dashboard: members, their sign-ins, hidden merchants and the
	// audit log.

	// MemberInsert stores a member; ErrConflict when the developer has a
	// member with the e-mail already (e-mails are unique per developer).
	MemberInsert(ctx context.Context, m *Member) error
	// MemberListByEmail lists the members with an e-mail, of any developer
	// unless params name one, oldest first: sign-in is where the tenant is
	// learnt, so it is the one member query not scoped by client.
	MemberListByEmail(ctx context.Context, params *MemberListByEmailParams) ([]*Member, error)
	MemberGet(ctx context.Context, clientID, id string) (*Member, error)
	// MemberList lists the developer's members, oldest first.
	MemberList(ctx context.Context, clientID string) ([]*Member, error)
	MemberDelete(ctx context.Context, clientID, id string) error
	MemberSetRole(ctx context.Context, clientID, id, role string, now time.Time) error
	// MemberCountAdmins counts the developer's admins.
	MemberCountAdmins(ctx context.Context, clientID string) (int, error)
	// MemberSetPassword replaces a member's password hash and sets or
	// clears must_change_password.
	MemberSetPassword(ctx context.Context, clientID, id, passwordHash string, mustChange bool, now time.Time) error
	// MemberRecordFailure counts a failed sign-in unless the member is
	// locked at now; the failure that reaches maxFailures locks the member
	// until lockedUntil and starts counting again. It is one conditional
	// statement, so concurrent failures never count past the lock. It
	// reports whether the member is locked after it: by this failure, or
	// already (then nothing was counted).
	MemberRecordFailure(ctx context.Context, clientID, id string, maxFailures int, lockedUntil, now time.Time) (locked bool, err error)
	// MemberResetFailures forgets failed sign-ins after a success, unless
	// the member is locked at now: then it changes nothing and reports
	// locked. Run in the success's transaction, it checks and holds the
	// member's row until commit, so a success never commits while locked.
	MemberResetFailures(ctx context.Context, clientID, id string, now time.Time) (locked bool, err error)

	DashboardSessionInsert(ctx context.Context, s *DashboardSession) error
	// DashboardSessionGetByTokenHash finds a sign-in by its cookie's hash,
	// with its member; like MemberListByEmail it is how the tenant is learnt.
	DashboardSessionGetByTokenHash(ctx context.Context, tokenHash []byte) (*DashboardSession, *Member, error)
	// DashboardSessionTouch moves a sign-in's last_seen_at to now.
	DashboardSessionTouch(ctx context.Context, clientID, id string, now time.Time) error
	DashboardSessionDelete(ctx context.Context, clientID, id string) error
	// DashboardSessionDeleteExpired removes the sign-ins that ended before
	// now (absolute expiry) or were last seen before idleBefore.
	DashboardSessionDeleteExpired(ctx context.Context, now, idleBefore time.Time) (int64, error)
	// DashboardSessionDeleteMember ends every sign-in of a member.
	DashboardSessionDeleteMember(ctx context.Context, clientID, memberID string) (int64, error)
	// DashboardSessionDeleteOthers ends every sign-in of a member but
	// keepID's, and reports how many it ended.
	DashboardSessionDeleteOthers(ctx context.Context, clientID, memberID, keepID string) (int64, error)

	// MerchantHide hides a merchant from the developer's link flow (no
	// error when it is hidden already); MerchantShow shows it again.
	MerchantHide(ctx context.Context, clientID string, merchantID int64, now time.Time) error
	MerchantShow(ctx context.Context, clientID string, merchantID int64) error
	// MerchantHiddenList returns the ids of the merchants the developer
	// hides.
	MerchantHiddenList(ctx context.Context, clientID string) (map[int64]bool, error)

	// ClientAuditSeqNext reserves the developer's next audit sequence
	// number. It updates the client's row, which it holds until the
	// transaction ends: writers of one developer's log serialise, so seq
	// order is commit order.
	ClientAuditSeqNext(ctx context.Context, clientID string) (int64, error)
	// ClientAuditSeq returns the last reserved audit sequence number.
	ClientAuditSeq(ctx context.Context, clientID string) (int64, error)
	AuditRecordInsert(ctx context.Context, r *AuditRecord) error
	// AuditRecordGetBySeq returns the developer's record number seq.
	AuditRecordGetBySeq(ctx context.Context, clientID string, seq int64) (*AuditRecord, error)
	// AuditRecordList lists the developer's records newest first (by seq),
	// filtered and paged by params.
	AuditRecordList(ctx context.Context, params *AuditRecordListParams) ([]*AuditRecord, error)
	// AuditRecordChain lists the developer's records by ascending seq,
	// after seq after, for chain verification.
	AuditRecordChain(ctx context.Context, clientID string, after int64, limit int) ([]*AuditRecord, error)

	// RequestLogInsert records API requests (already redacted), in one
	// statement.
	RequestLogInsert(ctx context.Context, entries []*RequestLog) error
	// RequestLogGet returns the developer's newest request with this
	// request id.
	RequestLogGet(ctx context.Context, clientID, requestID string) (*RequestLog, error)
	// RequestLogList lists the developer's requests newest first, filtered
	// and paged by params.
	RequestLogList(ctx context.Context, params *RequestLogListParams) ([]*RequestLog, error)
	// RequestLogCounts counts the developer's requests, and those answered
	// with an error (status 400 or more), in each span [bounds[i],
	// bounds[i+1]).
	RequestLogCounts(ctx context.Context, clientID string, bounds []time.Time) ([]RequestCount, error)
	// RequestLogDeleteBefore deletes up to limit requests (of every
	// developer) recorded before before, and reports how many it deleted.
	RequestLogDeleteBefore(ctx context.Context, before time.Time, limit int) (int64, error)

	// UserList lists the developer's users by external_user_id, those
	// starting with params.Prefix after params.After.
	UserList(ctx context.Context, params *UserListParams) ([]*User, error)

	// Health: the dashboard's bounded reads of one developer's recent
	// deliveries, logins, card tasks and detections.

	// WebhookAttemptsSince lists the developer's delivery attempts started
	// at or after since, newest first, up to limit, without their
	// response bodies and errors.
	WebhookAttemptsSince(ctx context.Context, clientID string, since time.Time, limit int) ([]*WebhookAttempt, error)
	// WebhookAttemptsFailed lists the failed attempts to one endpoint
	// started at or after since, newest first, up to limit, with their
	// response snippets.
	WebhookAttemptsFailed(ctx context.Context, clientID, endpointID string, since time.Time, limit int) ([]*WebhookAttempt, error)
	// AccountCounts counts the developer's accounts per merchant: linked
	// and connected, linked and disconnected, unlinked.
	AccountCounts(ctx context.Context, clientID string) ([]*AccountCount, error)
	// AccountLoginsSince lists the login steps recorded at or after since,
	// newest first, up to limit.
	AccountLoginsSince(ctx context.Context, clientID string, since time.Time, limit int) ([]*AccountLogin, error)
	// AccountLoginAdd records a step of a user's first login at a merchant,
	// which has no account yet (AccountLifecycleSet records the others).
	AccountLoginAdd(ctx context.Context, params *AccountLoginAddParams) error
	// AccountLoginsOfUser lists a user's login steps, newest first, up to
	// limit.
	AccountLoginsOfUser(ctx context.Context, clientID, userID string, limit int) ([]*AccountLogin, error)
	// TaskCounts counts the tasks that finished at or after since per
	// merchant, product, status and reason.
	TaskCounts(ctx context.Context, clientID string, since time.Time) ([]*TaskCount, error)
	// TaskListByUser lists a user's tasks, newest first, up to limit.
	TaskListByUser(ctx context.Context, clientID, userID string, limit int) ([]*Task, error)
	// DetectionCounts counts the detection requests made at or after
	// since, and the accounts detected since then per catalog merchant
	// (merchant 0: known by name only).
	DetectionCounts(ctx context.Context, clientID string, since time.Time) (*DetectionCounts, error)
	// TransactionsOfUser lists the transactions first stored for a user's
	// accounts, newest first, up to limit.
	TransactionsOfUser(ctx context.Context, clientID, userID string, limit int) ([]*UserTransaction, error)

	// The web origins a developer allows to embed its hosted link flow.

	// LinkOriginList returns the developer's allowed origins, sorted; empty
	// when it has registered none.
	LinkOriginList(ctx context.Context, clientID string) ([]string, error)
	// LinkOriginSet replaces the developer's allowed origins with origins
	// (already validated; none removes them all) in one statement.
	LinkOriginSet(ctx context.Context, clientID string, origins []string, now time.Time) error
}

// Client is a developer account (a tenant).
type Client struct {
	ID          string
	Name        string
	Environment string
	CreatedAt   time.Time
}

type ClientInsertParams struct {
	ID          string
	Name        string
	Environment string
	CreatedAt   time.Time
}

// ClientSecret is one API secret of a client. Only its SHA-256 hash and a copy
// sealed under the master key are stored.
type ClientSecret struct {
	ID        string
	ClientID  string
	Hash      []byte
	Sealed    []byte
	CreatedAt time.Time
	ExpiresAt *time.Time // nil while it is the current secret
}

type ClientSecretInsertParams struct {
	ID        string
	ClientID  string
	Hash      []byte
	Sealed    []byte
	CreatedAt time.Time
}

// User is one end user of a client, known by the client's external_user_id.
type User struct {
	ID             string
	ClientID       string
	ExternalUserID string
	CreatedAt      time.Time
}

type UserGetOrCreateParams struct {
	ID             string // used when the user is created
	ClientID       string
	ExternalUserID string
	CreatedAt      time.Time
}

// Session is an SDK session. The session value itself is never stored, only
// its SHA-256 hash.
type Session struct {
	ID                   string
	ClientID             string
	UserID               string
	ExternalUserID       string
	Type                 string
	TokenHash            []byte
	CardID               *string
	MerchantID           *int64
	ProcessorTokenSealed []byte
	Metadata             json.RawMessage
	CreatedAt            time.Time
	ExpiresAt            time.Time
}

type SessionInsertParams struct {
	ID                   string
	ClientID             string
	UserID               string
	Type                 string
	TokenHash            []byte
	CardID               *string
	MerchantID           *int64
	ProcessorTokenSealed []byte
	Metadata             json.RawMessage // nil for none
	CreatedAt            time.Time
	ExpiresAt            time.Time
}

type SessionUpdateExpiryParams struct {
	ClientID  string
	ID        string
	ExpiresAt time.Time
}

// Account is a user's merchant account as stored.
type Account struct {
	ID               string
	ClientID         string
	UserID           string
	MerchantID       int64
	ConnectionStatus string
	Scopes           []string
	LifecycleStatus  *string
	LastActionAt     *time.Time
	LastActionStatus *string
	LinkedAt         time.Time
	UnlinkedAt       *time.Time
	CreatedAt        time.Time
	UpdatedAt        time.Time
	// Metadata is the most recent link's, echoed in the account's events
	// (nil for none). AccountGet reads it; AccountList leaves it out.
	Metadata json.RawMessage
}

type AccountLinkParams struct {
	ID         string // used when the account is created
	ClientID   string
	UserID     string
	MerchantID int64
	// Scopes are a new account's; linking an existing one keeps its scopes.
	Scopes []string
	// Metadata replaces the account's (nil for none).
	Metadata json.RawMessage
	Now      time.Time
}

// AccountListParams name the user by external_user_id, so that listing
// costs one query.
type AccountListParams struct {
	ClientID       string
	ExternalUserID string
	Product        string // "" for the latest attempt of any product
}

type AccountGetParams struct {
	ClientID   string
	UserID     string
	MerchantID int64
	Product    string
}

// AccountRef names one account of a user.
type AccountRef struct {
	ClientID   string
	UserID     string
	MerchantID int64
	Now        time.Time
}

type AccountSetConnectionParams struct {
	AccountRef
	Status string
	Scopes []string
}

type AccountLifecycleSetParams struct {
	ClientID  string
	AccountID string
	Product   string
	Status    string
	// ActionStatus is the account's last_user_action.status.
	ActionStatus string
	At           time.Time
}

type AccountActionSetParams struct {
	ClientID    string
	AccountID   string
	Product     string
	Status      string
	AttemptedAt time.Time
	Now         time.Time
}

// Event is an append-only record of something that happened, with the
// envelope that webhooks deliver.
type Event struct {
	ID             string
	ClientID       string
	UserID         *string
	ExternalUserID *string
	Type           string
	Sequence       int64
	Payload        json.RawMessage
	CreatedAt      time.Time
}

type EventInsertParams struct {
	ID             string
	ClientID       string
	UserID         *string
	ExternalUserID *string
	Type           string
	Sequence       int64
	Payload        json.RawMessage
	CreatedAt      time.Time
}

type EventListParams struct {
	ClientID string
	// Type and ExternalUserID filter when set.
	Type           string
	ExternalUserID string
	// Since and Until bound created_at (inclusive) when set.
	Since, Until *time.Time
	// Before continues a listing after the event with this id.
	Before string
	Limit  int
}

// Webhook endpoint statuses.
const (
	WebhookEndpointEnabled  = "enabled"
	WebhookEndpointDisabled = "disabled"
)

// WebhookEndpoint is a URL that receives a developer's events.
type WebhookEndpoint struct {
	ID       string
	ClientID string
	URL      string
	// EventTypes filters the events delivered; empty for every event.
	EventTypes   []string
	SecretSealed []byte
	// PreviousSealed is the secret before the last rotation, signing beside
	// the new one until PreviousExpiresAt.
	PreviousSealed    []byte
	PreviousExpiresAt *time.Time
	Status            string
	DisabledReason    *string
	// FailingSince is when deliveries began failing without a success since.
	FailingSince *time.Time
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

type WebhookEndpointRotateSecretParams struct {
	ClientID          string
	ID                string
	SecretSealed      []byte
	PreviousExpiresAt time.Time
	Now               time.Time
}

type WebhookEndpointUpdateParams struct {
	ClientID string
	ID       string
	// URL and EventTypes replace the endpoint's when set.
	URL        *string
	EventTypes *[]string
	Now        time.Time
}

// Webhook attempt outcomes.
const (
	AttemptSucceeded = "succeeded"
	AttemptFailed    = "failed"
)

// WebhookAttempt is one try at delivering an event to an endpoint.
type WebhookAttempt struct {
	ClientID   string
	EventID    string
	EndpointID string
	// Attempt counts from 1 per event and endpoint.
	Attempt int
	// JobID is the delivery job that made the attempt (0 for attempts
	// recorded before it was kept).
	JobID     int64
	StartedAt time.Time
	Duration  time.Duration
	// StatusCode is nil when no response arrived.
	StatusCode *int
	// ResponseBody holds at most the first 1 KiB of the answer.
	ResponseBody string
	Error        string
	Outcome      string
}

// JWEKey is an RSA key pair for card data encryption. The private key is
// stored sealed under the master key.
type JWEKey struct {
	KID           string
	PublicJWK     json.RawMessage
	PrivateSealed []byte
	CreatedAt     time.Time
	RetiresAt     *time.Time
}

type JWEKeyInsertParams struct {
	KID           string
	PublicJWK     json.RawMessage
	PrivateSealed []byte
	// Bootstrap marks the database's first key; only one can exist.
	Bootstrap bool
	CreatedAt time.Time
}

// TransactionRow is a stored transaction: what was observed, rendered in
// the two shapes the API serves.
type TransactionRow struct {
	ID         string
	ClientID   string
	AccountID  string
	ExternalID string
	Position   int64
	// Digest identifies the observed data: the same digest is no change.
	Digest    []byte
	SyncJSON  []byte
	FullJSON  []byte
	CreatedAt time.Time
	UpdatedAt time.Time
}

// StoredDigest is the id and digest of a stored transaction or
// subscription.
type StoredDigest struct {
	ID     string
	Digest []byte
}

// TransactionPageRow is one transaction of a sync page.
type TransactionPageRow struct {
	Position int64
	SyncJSON []byte
}

// SubscriptionRow is a stored subscription and its document.
type SubscriptionRow struct {
	ID         string
	ClientID   string
	AccountID  string
	ExternalID string
	Digest     []byte
	JSON       []byte
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

// Connector is a merchant connector's credential for the internal ingestion
// API. Only the SHA-256 of its secret is stored.
type Connector struct {
	ID         string
	Name       string
	SecretHash []byte
	CreatedAt  time.Time
	RevokedAt  *time.Time // nil while it may authenticate
	// MerchantIDs are the merchants it declared it serves; nil until it
	// declares.
	MerchantIDs []int64
	LastSeenAt  *time.Time
}

// Work kinds.
const (
	WorkLogin   = "login"
	WorkRefresh = "refresh"
	WorkDetect  = "detect"
)

// Work statuses. A login goes pending → claimed → (otp_required |
// questions_required → answered → claimed | wrong_answer …) →
// authenticated → done, or failed; a refresh pending → claimed → done or
// failed, back to pending when its lease ends; a detect pending → claimed →
// done or failed.
const (
	WorkPending           = "pending"
	WorkClaimed           = "claimed"
	WorkOTPRequired       = "otp_required"
	WorkQuestionsRequired = "questions_required"
	WorkWrongAnswer       = "wrong_answer"
	WorkAnswered          = "answered"
	WorkAuthenticated     = "authenticated"
	WorkDone              = "done"
	WorkFailed            = "failed"
)

// Work is a unit of work for a connector.
type Work struct {
	ID             string
	Kind           string
	ClientID       string
	ExternalUserID string
	MerchantID     int64
	Product        string
	// RequestID is a detect unit's detection request.
	RequestID *string
	Status    string
	Question  *string
	Reason    *string
	// InputSealed is the sealed credentials or answer, nil once taken.
	InputSealed []byte
	ConnectorID *string
	LeaseHash   []byte
	LeaseUntil  *time.Time
	Attempts    int
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// WorkClaimParams are a connector's claim.
type WorkClaimParams struct {
	ConnectorID string
	MerchantIDs []int64
	Kinds       []string
	Limit       int
	LeaseHash   []byte
	LeaseUntil  time.Time
	Now         time.Time
}

// WorkReportParams are a step reported under a lease.
type WorkReportParams struct {
	ID         string
	LeaseHash  []byte
	From       []string
	Status     string
	Question   *string
	Reason     *string
	LeaseUntil time.Time
	Now        time.Time
}

// WorkSetParams move work without a lease.
type WorkSetParams struct {
	ID       string
	From     []string
	Status   string
	Input    []byte
	Reason   *string
	Attempts bool // count one more attempt
	// ReleaseLease drops the connector's lease (the work may be claimed
	// again).
	ReleaseLease bool
	Now          time.Time
}

// WorkCount is how much work of a kind a connector has in a status.
type WorkCount struct {
	ConnectorID string
	Kind        string
	Status      string
	Count       int
}

// ConnectorState is what a connector keeps of a linked account.
type ConnectorState struct {
	ClientID       string
	ExternalUserID string
	MerchantID     int64
	StateSealed    []byte
	NextRefreshAt  time.Time
	LastRefreshAt  *time.Time
	UpdatedAt      time.Time
}

// Task states.
const (
	TaskAwaitingCard = "awaiting_card"
	TaskPending      = "pending"
	TaskSucceeded    = "succeeded"
	TaskFailed       = "failed"
)

// Task is work a login starts at a merchant: switching the card on file
// (card_switcher) or vaulting the one there (vault).
type Task struct {
	// ID is random in [1, 2^53).
	ID             int64
	ClientID       string
	ExternalUserID string
	UserID         string
	AccountID      string
	MerchantID     int64
	Product        string
	CardID         *string
	SessionID      *string
	Status         string
	Reason         *string
	// CardSealed is the card without its CVV, sealed under the master key,
	// held only while a pending task waits for its connector.
	CardSealed   []byte
	CardBrand    *string
	CardLastFour *string
	CardExpMonth *int
	CardExpYear  *int
	Metadata     json.RawMessage
	// CardDeadline is when a task awaiting its card fails without it.
	CardDeadline *time.Time
	ClaimedAt    *time.Time
	CreatedAt    time.Time
	UpdatedAt    time.Time
	FinishedAt   *time.Time
	// Simulation is the development simulator's decision for a pending
	// task ("succeed", or "fail:" and a reason), nil once it has ended and
	// for production tasks.
	Simulation *string
}

// CardSummary is what may be kept of a card: never its number or CVV.
type CardSummary struct {
	Brand    string
	LastFour string
	ExpMonth int
	ExpYear  int
}

type TaskAttachCardParams struct {
	ClientID   string
	ID         int64
	Card       CardSummary
	CardSealed []byte
	// Simulation is the simulator's decision, in development.
	Simulation *string
	Now        time.Time
}

type TaskFinishParams struct {
	ClientID string
	ID       int64
	// From, when set, is the only state finished from.
	From   string
	Status string
	Reason *string
	// Card, when set, is the summary of the card the task ends with (a
	// vaulted card).
	Card *CardSummary
	Now  time.Time
}

type TaskListSimulationsParams struct {
	// After, when set, starts the list after this task in the list's
	// order (created_at, id).
	After *Task
	Limit int
}

type TaskListPendingParams struct {
	// MerchantID limits the list to one merchant (0 for all).
	MerchantID int64
	Limit      int
}

// Detection request states.
const (
	DetectionPending = "pending"
	DetectionDone    = "done"
)

// DetectionRequest is one run of detection for a user. Its inputs are
// sealed under the master key.
type DetectionRequest struct {
	ID                   string
	ClientID             string
	UserID               string
	ExternalUserID       string // read back, not written
	SessionID            *string
	EmailSealed          []byte
	PhoneSealed          []byte
	ProcessorTokenSealed []byte
	// Metadata is the starting session's, echoed in the event.
	Metadata json.RawMessage
	Status   string
	// Found is how many accounts the request found that were new, once done.
	Found      *int
	CreatedAt  time.Time
	FinishedAt *time.Time
}

// DetectedAccount is a merchant account found for a user: at a catalog
// merchant, or at one known only by name (MerchantID nil).
type DetectedAccount struct {
	ID         string
	ClientID   string
	UserID     string
	MerchantID *int64
	Name       string
	// NameKey is "#<merchant id>" or the name's matching key: one
	// detection per user and key.
	NameKey          string
	LoginMethod      string
	AccountCreatedAt *time.Time
	Source           string
	Position         int64
	DetectedAt       time.Time
}

type DetectedAccountListParams struct {
	ClientID string
	UserID   string
	// MerchantID limits the list to one catalog merchant when not zero.
	MerchantID int64
	// Unlinked leaves out detections of merchants the user has linked.
	Unlinked bool
	// CatalogOnly leaves out merchants not in the catalog.
	CatalogOnly bool
	// After is the position the list starts after.
	After int64
	// Limit bounds the list; 0 for no bound.
	Limit int
}

// Member roles.
const (
	RoleAdmin     = "admin"
	RoleDeveloper = "developer"
	RoleViewer    = "viewer"
)

// Member is a person of a developer's team who signs in to the dashboard.
type Member struct {
	ID       string
	ClientID string
	Email    string
	Name     string
	Role     string
	// PasswordHash is an argon2id PHC string; the password is never kept.
	PasswordHash   string
	FailedAttempts int
	// LockedUntil is set while sign-ins are refused after failures.
	LockedUntil *time.Time
	// MustChangePassword: someone else chose the password (an admin, hitch
	// members add); the member chooses their own before anything else.
	MustChangePassword bool
	CreatedAt          time.Time
	UpdatedAt          time.Time
}

// MemberListByEmailParams select the members with an e-mail.
type MemberListByEmailParams struct {
	Email string
	// ClientID keeps the developer's member only, when set.
	ClientID string
	// Limit bounds the list; 0 for no bound.
	Limit int
}

// DashboardSession is a member's sign-in. Only the SHA-256 of the cookie
// value is stored.
type DashboardSession struct {
	ID         string
	ClientID   string
	MemberID   string
	TokenHash  []byte
	CreatedAt  time.Time
	LastSeenAt time.Time
	ExpiresAt  time.Time
}

// AuditRecord is one entry of a developer's audit log, chained to the
// previous one by its hash.
type AuditRecord struct {
	ID          string
	ClientID    string
	Seq         int64
	CreatedAt   time.Time
	Action      string
	Outcome     string
	ActorName   string
	ActorEmail  string
	TargetType  string
	TargetName  *string
	Environment string
	IP          string
	UserAgent   string
	// PrevHash is nil for the first record of a developer.
	PrevHash []byte
	Hash     []byte
}

type AuditRecordListParams struct {
	ClientID string
	// Since and Until bound created_at (inclusive) when set.
	Since, Until *time.Time
	// Before continues a listing at the records with seq below it (0: from
	// the newest).
	Before int64
	Limit  int
}

// RequestCount is how many requests a span held, and how many of them
// were answered with an error.
type RequestCount struct {
	Requests, Errors int
}

// RequestLog is one API request of a developer, its bodies and query
// redacted before they reach the store.
type RequestLog struct {
	ID             int64
	ClientID       string
	RequestID      string
	CreatedAt      time.Time
	Method         string
	Path           string
	Query          string
	Status         int
	ErrorCode      string
	Latency        time.Duration // kept to the microsecond
	IP             string
	ExternalUserID string
	RequestBody    string
	ResponseBody   string
}

type RequestLogListParams struct {
	ClientID string
	// Filters, each ignored when empty (StatusClass 0): an exact request
	// id, the status's hundred (2 for 2xx), a path prefix, an exact error
	// code and an exact external_user_id.
	RequestID      string
	StatusClass    int
	PathPrefix     string
	ErrorCode      string
	ExternalUserID string
	// Before continues a listing at the requests with id below it (0: from
	// the newest).
	Before int64
	Limit  int
}

type UserListParams struct {
	ClientID string
	// Prefix narrows the list to external_user_ids that start with it.
	Prefix string
	// After continues a listing after this external_user_id.
	After string
	Limit int
}

// LinkChallenge is a login step of the hosted flow awaiting its answer.
type LinkChallenge struct {
	ID        string
	ClientID  string
	SessionID string
	ExpiresAt time.Time
	CreatedAt time.Time
}

// AccountCount is how many of a developer's accounts at a merchant are in
// each state.
type AccountCount struct {
	MerchantID   int64
	Connected    int
	Disconnected int
	Unlinked     int
}

// AccountLoginAddParams is a step of a first login: see AccountLoginAdd.
type AccountLoginAddParams struct {
	ClientID   string
	UserID     string
	MerchantID int64
	Product    string
	Status     string
	At         time.Time
}

// AccountLogin is one step of a login at a merchant, as recorded.
type AccountLogin struct {
	// AccountID is empty for a step of the user's first login there.
	AccountID  string
	MerchantID int64
	Product    string
	Status     string
	CreatedAt  time.Time
}

// TaskCount is how many finished tasks share a merchant, product, status
// and reason.
type TaskCount struct {
	MerchantID int64
	Product    string
	Status     string
	Reason     string // "" for none
	Count      int
}

// DetectionCounts are a window's detection requests and what they found.
type DetectionCounts struct {
	Requests int
	Done     int
	// Hits counts detected accounts per catalog merchant (0: a merchant
	// known by name only).
	Hits map[int64]int
}

// UserTransaction is a transaction of one of a user's accounts, with when
// Hitch first stored it.
type UserTransaction struct {
	AccountID  string
	MerchantID int64
	SyncJSON   []byte
	CreatedAt  time.Time
}
