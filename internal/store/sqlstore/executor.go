package sqlstore

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/hitchdev/hitch/internal/store"
)

type executor struct {
	conn Conn
	drv  Driver
}

// wrap translates the driver's no-rows error into store.ErrNotFound, a
// unique violation into store.ErrConflict and a lost database into
// store.ErrUnavailable, prefixing what was being done.
func (e *executor) wrap(op string, err error) error {
	switch {
	case err == nil:
		return nil
	case e.drv.IsNoRows(err):
		return fmt.Errorf("%s: %w", op, store.ErrNotFound)
	case e.drv.IsUniqueViolation(err):
		return fmt.Errorf("%s: %w: %v", op, store.ErrConflict, err)
	case e.drv.IsUnavailable(err):
		return fmt.Errorf("%s: %w: %w", op, store.ErrUnavailable, err)
	default:
		return fmt.Errorf("%s: %w", op, err)
	}
}

// ts converts a time argument to the dialect's representation.
func (e *executor) ts(t time.Time) any { return e.drv.Time(t) }

// jsonArg passes raw JSON as text, which both dialects accept for their JSON
// column types; nil stays NULL.
func jsonArg(raw json.RawMessage) any {
	if raw == nil {
		return nil
	}
	return string(raw)
}

// Clients

func (e *executor) ClientInsert(ctx context.Context, p *store.ClientInsertParams) (*store.Client, error) {
	_, err := e.conn.Exec(ctx, `INSERT INTO clients (id, name, environment, created_at) VALUES ($1, $2, $3, $4)`,
		p.ID, p.Name, p.Environment, e.ts(p.CreatedAt))
	if err != nil {
		return nil, e.wrap("client: insert", err)
	}
	return &store.Client{ID: p.ID, Name: p.Name, Environment: p.Environment, CreatedAt: p.CreatedAt.UTC()}, nil
}

const clientColumns = `id, name, environment, created_at`

func scanClient(row Row) (*store.Client, error) {
	var c store.Client
	if err := row.Scan(&c.ID, &c.Name, &c.Environment, timeDest{&c.CreatedAt}); err != nil {
		return nil, err
	}
	return &c, nil
}

func (e *executor) ClientGetByID(ctx context.Context, id string) (*store.Client, error) {
	c, err := scanClient(e.conn.QueryRow(ctx, `SELECT `+clientColumns+` FROM clients WHERE id = $1`, id))
	if err != nil {
		return nil, e.wrap("client: get by id", err)
	}
	return c, nil
}

func (e *executor) ClientList(ctx context.Context) ([]*store.Client, error) {
	rows, err := e.conn.Query(ctx, `SELECT `+clientColumns+` FROM clients ORDER BY created_at, id`)
	if err != nil {
		return nil, e.wrap("client: list", err)
	}
	return collect(rows, scanClient, e, "client: list")
}

func (e *executor) ClientCount(ctx context.Context) (int, error) {
	var n int
	if err := e.conn.QueryRow(ctx, `SELECT COUNT(*) FROM clients`).Scan(&n); err != nil {
		return 0, e.wrap("client: count", err)
	}
	return n, nil
}

func (e *executor) ClientSecretInsert(ctx context.Context, p *store.ClientSecretInsertParams) error {
	_, err := e.conn.Exec(ctx, `INSERT INTO client_secrets (id, client_id, hash, sealed, created_at) VALUES ($1, $2, $3, $4, $5)`,
		p.ID, p.ClientID, p.Hash, p.Sealed, e.ts(p.CreatedAt))
	return e.wrap("client secret: insert", err)
}

func (e *executor) ClientSecretExpireCurrent(ctx context.Context, clientID string, expiresAt time.Time) error {
	_, err := e.conn.Exec(ctx, `UPDATE client_secrets SET expires_at = $2 WHERE client_id = $1 AND expires_at IS NULL`,
		clientID, e.ts(expiresAt))
	return e.wrap("client secret: expire current", err)
}

func (e *executor) ClientSecretListLive(ctx context.Context, clientID string, now time.Time) ([]*store.ClientSecret, error) {
	rows, err := e.conn.Query(ctx, `SELECT id, client_id, hash, sealed, created_at, expires_at FROM client_secrets
		WHERE client_id = $1 AND (expires_at IS NULL OR expires_at > $2) ORDER BY created_at DESC`, clientID, e.ts(now))
	if err != nil {
		return nil, e.wrap("client secret: list live", err)
	}
	return collect(rows, func(row Row) (*store.ClientSecret, error) {
		var s store.ClientSecret
		if err := row.Scan(&s.ID, &s.ClientID, &s.Hash, &s.Sealed, timeDest{&s.CreatedAt}, nullTimeDest{&s.ExpiresAt}); err != nil {
			return nil, err
		}
		return &s, nil
	}, e, "client secret: list live")
}

// Users

const userColumns = `id, client_id, external_user_id, created_at`

func scanUser(row Row) (*store.User, error) {
	var u store.User
	if err := row.Scan(&u.ID, &u.ClientID, &u.ExternalUserID, timeDest{&u.CreatedAt}); err != nil {
		return nil, err
	}
	return &u, nil
}

func (e *executor) UserGetOrCreate(ctx context.Context, p *store.UserGetOrCreateParams) (*store.User, error) {
	_, err := e.conn.Exec(ctx, `INSERT INTO users (id, client_id, external_user_id, event_sequence, created_at)
		VALUES ($1, $2, $3, 0, $4) ON CONFLICT (client_id, external_user_id) DO NOTHING`,
		p.ID, p.ClientID, p.ExternalUserID, e.ts(p.CreatedAt))
	if err != nil {
		return nil, e.wrap("user: get or create", err)
	}
	return e.UserGet(ctx, p.ClientID, p.ExternalUserID)
}

func (e *executor) UserGet(ctx context.Context, clientID, externalUserID string) (*store.User, error) {
	u, err := scanUser(e.conn.QueryRow(ctx, `SELECT `+userColumns+` FROM users WHERE client_id = $1 AND external_user_id = $2`,
		clientID, externalUserID))
	if err != nil {
		return nil, e.wrap("user: get", err)
	}
	return u, nil
}

func (e *executor) UserAccountsVersion(ctx context.Context, clientID, externalUserID string) (string, int64, error) {
	var id string
	var version int64
	err := e.conn.QueryRow(ctx, `SELECT id, accounts_version FROM users WHERE client_id = $1 AND external_user_id = $2`,
		clientID, externalUserID).Scan(&id, &version)
	if err != nil {
		return "", 0, e.wrap("user: accounts version", err)
	}
	return id, version, nil
}

func (e *executor) UserNextEventSequence(ctx context.Context, clientID, userID string) (int64, error) {
	var seq int64
	err := e.conn.QueryRow(ctx, `UPDATE users SET event_sequence = event_sequence + 1
		WHERE client_id = $1 AND id = $2 RETURNING event_sequence`, clientID, userID).Scan(&seq)
	if err != nil {
		return 0, e.wrap("user: next event sequence", err)
	}
	return seq, nil
}

// Sessions

const sessionColumns = `s.id, s.client_id, s.user_id, u.external_user_id, s.type, s.token_hash, s.card_id, s.merchant_id,
	s.processor_token_sealed, s.metadata, s.created_at, s.expires_at`

func scanSession(row Row) (*store.Session, error) {
	var s store.Session
	var metadata []byte
	if err := row.Scan(&s.ID, &s.ClientID, &s.UserID, &s.ExternalUserID, &s.Type, &s.TokenHash, &s.CardID, &s.MerchantID,
		&s.ProcessorTokenSealed, &metadata, timeDest{&s.CreatedAt}, timeDest{&s.ExpiresAt}); err != nil {
		return nil, err
	}
	if metadata != nil {
		s.Metadata = json.RawMessage(metadata)
	}
	return &s, nil
}

func (e *executor) SessionInsert(ctx context.Context, p *store.SessionInsertParams) (*store.Session, error) {
	// The email and phone_number columns stay NULL: detection keeps them,
	// sealed (migration 0007).
	_, err := e.conn.Exec(ctx, `INSERT INTO sessions (id, client_id, user_id, type, token_hash, card_id, merchant_id,
		processor_token_sealed, metadata, created_at, expires_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
		p.ID, p.ClientID, p.UserID, p.Type, p.TokenHash, p.CardID, p.MerchantID,
		p.ProcessorTokenSealed, jsonArg(p.Metadata), e.ts(p.CreatedAt), e.ts(p.ExpiresAt))
	if err != nil {
		return nil, e.wrap("session: insert", err)
	}
	return e.sessionGet(ctx, p.ClientID, `s.id = $2`, p.ID)
}

func (e *executor) sessionGet(ctx context.Context, clientID, cond string, arg any) (*store.Session, error) {
	s, err := scanSession(e.conn.QueryRow(ctx, `SELECT `+sessionColumns+` FROM sessions s JOIN users u ON u.id = s.user_id
		WHERE s.client_id = $1 AND `+cond, clientID, arg))
	if err != nil {
		return nil, e.wrap("session: get", err)
	}
	return s, nil
}

func (e *executor) SessionGetByTokenHash(ctx context.Context, clientID string, tokenHash []byte) (*store.Session, error) {
	return e.sessionGet(ctx, clientID, `s.token_hash = $2`, tokenHash)
}

func (e *executor) SessionGet(ctx context.Context, clientID, id string) (*store.Session, error) {
	return e.sessionGet(ctx, clientID, `s.id = $2`, id)
}

func (e *executor) SessionUpdateExpiry(ctx context.Context, p *store.SessionUpdateExpiryParams) (*store.Session, error) {
	n, err := e.conn.Exec(ctx, `UPDATE sessions SET expires_at = $3 WHERE client_id = $1 AND id = $2`,
		p.ClientID, p.ID, e.ts(p.ExpiresAt))
	if err != nil {
		return nil, e.wrap("session: update expiry", err)
	}
	if n == 0 {
		return nil, fmt.Errorf("session: update expiry: %w", store.ErrNotFound)
	}
	return e.sessionGet(ctx, p.ClientID, `s.id = $2`, p.ID)
}

// Accounts

// accountState are the columns of an account's state, with the lifecycle
// status of one product ($3), or of the most recent attempt of any product
// when $3 is empty.
const accountState = `a.merchant_id, a.connection_status, a.scopes,
	CASE $3
		WHEN 'card_switcher' THEN a.lifecycle_card_switcher
		WHEN 'transaction_link' THEN a.lifecycle_transaction_link
		WHEN 'vault' THEN a.lifecycle_vault
		ELSE a.lifecycle_latest
	END,
	CASE $3
		WHEN 'card_switcher' THEN a.action_at_card_switcher
		WHEN 'transaction_link' THEN a.action_at_transaction_link
		WHEN 'vault' THEN a.action_at_vault
		ELSE a.last_action_at
	END,
	CASE $3
		WHEN 'card_switcher' THEN a.action_status_card_switcher
		WHEN 'transaction_link' THEN a.action_status_transaction_link
		WHEN 'vault' THEN a.action_status_vault
		ELSE a.last_action_status
	END,
	a.linked_at`

// accountSelect reads the linked account of user $2, with its ids and
// metadata.
const accountSelect = `SELECT a.id, a.user_id, a.metadata, ` + accountState + `
	FROM accounts a
	WHERE a.client_id = $1 AND a.user_id = $2 AND a.unlinked_at IS NULL`

// scanAccount reads accountState, after the ids and metadata when withIDs.
// The tenant is the caller's and is not read back: every column costs a
// round of SQLite calls per row, which is also why listing leaves the ids
// and metadata out.
func scanAccount(row Row, clientID string, withIDs bool) (*store.Account, error) {
	a := store.Account{ClientID: clientID}
	var scopes string
	var metadata []byte
	dest := make([]any, 0, 10)
	if withIDs {
		dest = append(dest, &a.ID, &a.UserID, &metadata)
	}
	dest = append(dest, &a.MerchantID, &a.ConnectionStatus, &scopes, nullStringDest{&a.LifecycleStatus},
		nullTimeDest{&a.LastActionAt}, nullStringDest{&a.LastActionStatus}, timeDest{&a.LinkedAt})
	if err := row.Scan(dest...); err != nil {
		return nil, err
	}
	a.Scopes = splitList(scopes)
	if metadata != nil {
		a.Metadata = json.RawMessage(metadata)
	}
	return &a, nil
}

func (e *executor) AccountLink(ctx context.Context, p *store.AccountLinkParams) (*store.Account, error) {
	scopes, err := listArg(p.Scopes)
	if err != nil {
		return nil, fmt.Errorf("account: link: %w", err)
	}
	now := e.ts(p.Now)
	_, err = e.conn.Exec(ctx, `INSERT INTO accounts (id, client_id, user_id, merchant_id, connection_status, scopes,
			metadata, linked_at, created_at, updated_at)
		VALUES ($1, $2, $3, $4, 'connected', $5, $7, $6, $6, $6)
		ON CONFLICT (user_id, merchant_id) DO UPDATE SET
			connection_status = 'connected',
			metadata = excluded.metadata,
			linked_at = CASE WHEN accounts.unlinked_at IS NULL THEN accounts.linked_at ELSE excluded.linked_at END,
			unlinked_at = NULL,
			updated_at = excluded.updated_at`,
		p.ID, p.ClientID, p.UserID, p.MerchantID, scopes, now, jsonArg(p.Metadata))
	if err != nil {
		return nil, e.wrap("account: link", err)
	}
	return e.AccountGet(ctx, &store.AccountGetParams{ClientID: p.ClientID, UserID: p.UserID, MerchantID: p.MerchantID})
}

func (e *executor) AccountList(ctx context.Context, p *store.AccountListParams) ([]*store.Account, error) {
	rows, err := e.conn.Query(ctx, `SELECT `+accountState+`
		FROM accounts a JOIN users u ON u.id = a.user_id
		WHERE a.client_id = $1 AND u.client_id = $1 AND u.external_user_id = $2 AND a.unlinked_at IS NULL
		ORDER BY a.linked_at, a.merchant_id`, p.ClientID, p.ExternalUserID, p.Product)
	if err != nil {
		return nil, e.wrap("account: list", err)
	}
	return collect(rows, func(row Row) (*store.Account, error) { return scanAccount(row, p.ClientID, false) }, e, "account: list")
}

func (e *executor) AccountGet(ctx context.Context, p *store.AccountGetParams) (*store.Account, error) {
	a, err := scanAccount(e.conn.QueryRow(ctx, accountSelect+` AND a.merchant_id = $4`,
		p.ClientID, p.UserID, p.Product, p.MerchantID), p.ClientID, true)
	if err != nil {
		return nil, e.wrap("account: get", err)
	}
	return a, nil
}

func (e *executor) AccountUnlink(ctx context.Context, p *store.AccountRef) error {
	n, err := e.conn.Exec(ctx, `UPDATE accounts SET unlinked_at = $4, updated_at = $4
		WHERE client_id = $1 AND user_id = $2 AND merchant_id = $3 AND unlinked_at IS NULL`,
		p.ClientID, p.UserID, p.MerchantID, e.ts(p.Now))
	if err != nil {
		return e.wrap("account: unlink", err)
	}
	if n == 0 {
		return fmt.Errorf("account: unlink: %w", store.ErrNotFound)
	}
	return nil
}

func (e *executor) AccountSetConnection(ctx context.Context, p *store.AccountSetConnectionParams) (*store.Account, bool, error) {
	scopes, err := listArg(p.Scopes)
	if err != nil {
		return nil, false, fmt.Errorf("account: set connection: %w", err)
	}
	// The status condition makes concurrent transitions race-free: under
	// READ COMMITTED the loser re-evaluates it after the winner commits.
	n, err := e.conn.Exec(ctx, `UPDATE accounts SET connection_status = $4, scopes = $5, updated_at = $6
		WHERE client_id = $1 AND user_id = $2 AND merchant_id = $3 AND unlinked_at IS NULL AND connection_status <> $4`,
		p.ClientID, p.UserID, p.MerchantID, p.Status, scopes, e.ts(p.Now))
	if err != nil {
		return nil, false, e.wrap("account: set connection", err)
	}
	a, err := e.AccountGet(ctx, &store.AccountGetParams{ClientID: p.ClientID, UserID: p.UserID, MerchantID: p.MerchantID})
	if err != nil {
		return nil, false, err
	}
	return a, n > 0, nil
}

func (e *executor) AccountLifecycleSet(ctx context.Context, p *store.AccountLifecycleSetParams) error {
	at := e.ts(p.At)
	n, err := e.conn.Exec(ctx, `UPDATE accounts SET
			lifecycle_card_switcher = CASE WHEN $3 = 'card_switcher' THEN $4 ELSE lifecycle_card_switcher END,
			lifecycle_transaction_link = CASE WHEN $3 = 'transaction_link' THEN $4 ELSE lifecycle_transaction_link END,
			lifecycle_vault = CASE WHEN $3 = 'vault' THEN $4 ELSE lifecycle_vault END,
			lifecycle_latest = $4,
			`+lifecycleActionSet+`, updated_at = $5
		WHERE client_id = $1 AND id = $2`, p.ClientID, p.AccountID, p.Product, p.Status, at, p.ActionStatus)
	if err != nil {
		return e.wrap("account: set lifecycle", err)
	}
	if n == 0 {
		return fmt.Errorf("account: set lifecycle: %w", store.ErrNotFound)
	}
	return e.accountLoginInsert(ctx, p)
}

// actionSet is the SQL that sets the last user action of the product bound
// to placeholder product, and of any product, to time at and status status.
func actionSet(product, at, status string) string {
	var b strings.Builder
	for _, p := range []string{"card_switcher", "transaction_link", "vault"} {
		fmt.Fprintf(&b, "action_at_%[1]s = CASE WHEN %[2]s = '%[1]s' THEN %[3]s ELSE action_at_%[1]s END,\n", p, product, at)
		fmt.Fprintf(&b, "action_status_%[1]s = CASE WHEN %[2]s = '%[1]s' THEN %[3]s ELSE action_status_%[1]s END,\n", p, product, status)
	}
	fmt.Fprintf(&b, "last_action_at = %s, last_action_status = %s", at, status)
	return b.String()
}

var (
	lifecycleActionSet = actionSet("$3", "$5", "$6")
	accountActionSet   = actionSet("$3", "$4", "$5")
)

func (e *executor) AccountActionSet(ctx context.Context, p *store.AccountActionSetParams) error {
	n, err := e.conn.Exec(ctx, `UPDATE accounts SET `+accountActionSet+`, updated_at = $6
		WHERE client_id = $1 AND id = $2`, p.ClientID, p.AccountID, p.Product, e.ts(p.AttemptedAt), p.Status, e.ts(p.Now))
	if err != nil {
		return e.wrap("account: set action", err)
	}
	if n == 0 {
		return fmt.Errorf("account: set action: %w", store.ErrNotFound)
	}
	return nil
}

func (e *executor) AccountAddScope(ctx context.Context, clientID, accountID, scope string, now time.Time) error {
	// Scopes are a comma-separated list of identifiers. The row is only
	// written when the scope is new: an account switching cards often
	// keeps its update_card without a write (and, on PostgreSQL, a lock).
	n, err := e.conn.Exec(ctx, `UPDATE accounts SET
			scopes = CASE WHEN scopes = '' THEN $3 ELSE scopes || ',' || $3 END,
			updated_at = $4
		WHERE client_id = $1 AND id = $2 AND connection_status = 'connected' AND unlinked_at IS NULL
			AND ',' || scopes || ',' NOT LIKE '%,' || $3 || ',%'`,
		clientID, accountID, scope, e.ts(now))
	if err != nil {
		return e.wrap("account: add scope", err)
	}
	if n > 0 {
		return nil
	}
	var has bool
	err = e.conn.QueryRow(ctx, `SELECT true FROM accounts
		WHERE client_id = $1 AND id = $2 AND connection_status = 'connected' AND unlinked_at IS NULL`,
		clientID, accountID).Scan(&has)
	return e.wrap("account: add scope", err)
}

// Events

const eventColumns = `id, client_id, user_id, external_user_id, type, sequence, payload, created_at`

func scanEvent(row Row) (*store.Event, error) {
	var ev store.Event
	var payload []byte
	if err := row.Scan(eventDest(&ev, &payload)...); err != nil {
		return nil, err
	}
	ev.Payload = json.RawMessage(payload)
	return &ev, nil
}

// eventDest are the scan destinations of eventColumns; the payload goes to
// payload, for the caller to set as ev.Payload once scanned.
func eventDest(ev *store.Event, payload *[]byte) []any {
	return []any{&ev.ID, &ev.ClientID, &ev.UserID, &ev.ExternalUserID, &ev.Type, &ev.Sequence, payload, timeDest{&ev.CreatedAt}}
}

func (e *executor) EventInsert(ctx context.Context, p *store.EventInsertParams) (*store.Event, error) {
	_, err := e.conn.Exec(ctx, `INSERT INTO events (`+eventColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
		p.ID, p.ClientID, p.UserID, p.ExternalUserID, p.Type, p.Sequence, jsonArg(p.Payload), e.ts(p.CreatedAt))
	if err != nil {
		return nil, e.wrap("event: insert", err)
	}
	return &store.Event{ID: p.ID, ClientID: p.ClientID, UserID: p.UserID, ExternalUserID: p.ExternalUserID,
		Type: p.Type, Sequence: p.Sequence, Payload: p.Payload, CreatedAt: p.CreatedAt.UTC()}, nil
}

// JWE keys

func (e *executor) JWEKeyInsert(ctx context.Context, p *store.JWEKeyInsertParams) (*store.JWEKey, error) {
	_, err := e.conn.Exec(ctx, `INSERT INTO jwe_keys (kid, public_jwk, private_sealed, bootstrap, created_at) VALUES ($1, $2, $3, $4, $5)`,
		p.KID, jsonArg(p.PublicJWK), p.PrivateSealed, p.Bootstrap, e.ts(p.CreatedAt))
	if err != nil {
		return nil, e.wrap("jwe key: insert", err)
	}
	return &store.JWEKey{KID: p.KID, PublicJWK: p.PublicJWK, PrivateSealed: p.PrivateSealed, CreatedAt: p.CreatedAt.UTC()}, nil
}

func scanJWEKey(row Row) (*store.JWEKey, error) {
	var k store.JWEKey
	var jwk []byte
	if err := row.Scan(&k.KID, &jwk, &k.PrivateSealed, timeDest{&k.CreatedAt}, nullTimeDest{&k.RetiresAt}); err != nil {
		return nil, err
	}
	k.PublicJWK = json.RawMessage(jwk)
	return &k, nil
}

func (e *executor) JWEKeyListUsable(ctx context.Context, now time.Time) ([]*store.JWEKey, error) {
	rows, err := e.conn.Query(ctx, `SELECT kid, public_jwk, private_sealed, created_at, retires_at FROM jwe_keys
		WHERE retires_at IS NULL OR retires_at > $1 ORDER BY created_at DESC, kid`, e.ts(now))
	if err != nil {
		return nil, e.wrap("jwe key: list usable", err)
	}
	return collect(rows, scanJWEKey, e, "jwe key: list usable")
}

func (e *executor) JWEKeyList(ctx context.Context) ([]*store.JWEKey, error) {
	rows, err := e.conn.Query(ctx, `SELECT kid, public_jwk, private_sealed, created_at, retires_at FROM jwe_keys
		ORDER BY created_at DESC, kid`)
	if err != nil {
		return nil, e.wrap("jwe key: list", err)
	}
	return collect(rows, scanJWEKey, e, "jwe key: list")
}

func (e *executor) JWEKeyRetireOthers(ctx context.Context, kid string, retiresAt, now time.Time) error {
	// A key already retiring sooner keeps its time: rotating twice does not
	// lengthen the first key's life.
	if _, err := e.conn.Exec(ctx, `UPDATE jwe_keys SET retires_at = $2
		WHERE kid <> $1 AND (retires_at IS NULL OR retires_at > $2)`, kid, e.ts(retiresAt)); err != nil {
		return e.wrap("jwe key: retire", err)
	}
	// A retired key decrypts nothing again: its private half goes.
	if _, err := e.conn.Exec(ctx, `UPDATE jwe_keys SET private_sealed = $2
		WHERE retires_at <= $1 AND length(private_sealed) > 0`, e.ts(now), []byte{}); err != nil {
		return e.wrap("jwe key: retire", err)
	}
	return nil
}

func (e *executor) MasterKeyCheck(ctx context.Context, sealed []byte) ([]byte, error) {
	if _, err := e.conn.Exec(ctx, `INSERT INTO master_key_check (id, sealed) VALUES (1, $1) ON CONFLICT (id) DO NOTHING`, sealed); err != nil {
		return nil, e.wrap("master key check", err)
	}
	var stored []byte
	if err := e.conn.QueryRow(ctx, `SELECT sealed FROM master_key_check WHERE id = 1`).Scan(&stored); err != nil {
		return nil, e.wrap("master key check", err)
	}
	return stored, nil
}

// collect reads every row with scan and closes rows.
func collect[T any](rows Rows, scan func(Row) (*T, error), e *executor, op string) ([]*T, error) {
	defer rows.Close()
	items := []*T{}
	for rows.Next() {
		item, err := scan(rows)
		if err != nil {
			return nil, e.wrap(op, err)
		}
		items = append(items, item)
	}
	if err := rows.Err(); err != nil {
		return nil, e.wrap(op, err)
	}
	return items, nil
}
