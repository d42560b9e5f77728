-- Timestamps are INTEGER Unix microseconds (UTC).

-- Developer accounts (tenants) and their API secrets. Secrets are kept as a
-- SHA-256 hash for lookup plus a copy sealed under the master key.
CREATE TABLE clients (
    id          TEXT PRIMARY KEY,
    name        TEXT NOT NULL,
    environment TEXT NOT NULL CHECK (environment IN ('development', 'production')),
    created_at  INTEGER NOT NULL
);

CREATE TABLE client_secrets (
    id         TEXT PRIMARY KEY,
    client_id  TEXT NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    hash       BLOB NOT NULL UNIQUE,
    sealed     BLOB NOT NULL,
    created_at INTEGER NOT NULL,
    expires_at INTEGER
);
CREATE INDEX client_secrets_client_id ON client_secrets (client_id);

-- End users of a developer, by the developer's external_user_id.
CREATE TABLE users (
    id               TEXT PRIMARY KEY,
    client_id        TEXT NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    external_user_id TEXT NOT NULL,
    event_sequence   INTEGER NOT NULL DEFAULT 0,
    created_at       INTEGER NOT NULL,
    UNIQUE (client_id, external_user_id)
);

-- SDK sessions. Only the SHA-256 of the session value is stored.
CREATE TABLE sessions (
    id                     TEXT PRIMARY KEY,
    client_id              TEXT NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    user_id                TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    type                   TEXT NOT NULL CHECK (type IN ('card_switcher', 'transaction_link', 'link', 'vault')),
    token_hash             BLOB NOT NULL UNIQUE,
    card_id                TEXT,
    merchant_id            INTEGER,
    email                  TEXT,
    phone_number           TEXT,
    processor_token_sealed BLOB,
    metadata               TEXT,
    created_at             INTEGER NOT NULL,
    expires_at             INTEGER NOT NULL
);
CREATE INDEX sessions_client_user ON sessions (client_id, user_id);

-- Merchant accounts of a user. Unlinking keeps the row (unlinked_at) so that
-- linking again reuses its id and history. scopes is a comma-separated list of
-- scope types (identifiers).
CREATE TABLE accounts (
    id                 TEXT PRIMARY KEY,
    client_id          TEXT NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    user_id            TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    merchant_id        INTEGER NOT NULL,
    connection_status  TEXT NOT NULL CHECK (connection_status IN ('connected', 'disconnected')),
    scopes             TEXT NOT NULL DEFAULT '',
    -- Status of the latest login attempt per product, and of any product.
    lifecycle_card_switcher    TEXT,
    lifecycle_transaction_link TEXT,
    lifecycle_vault            TEXT,
    lifecycle_latest           TEXT,
    last_action_at     INTEGER,
    last_action_status TEXT,
    linked_at          INTEGER NOT NULL,
    unlinked_at        INTEGER,
    created_at         INTEGER NOT NULL,
    updated_at         INTEGER NOT NULL,
    UNIQUE (user_id, merchant_id)
);
CREATE INDEX accounts_client_user ON accounts (client_id, user_id);

-- Append-only record of every event, with the envelope webhooks deliver.
CREATE TABLE events (
    id               TEXT PRIMARY KEY,
    client_id        TEXT NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    user_id          TEXT REFERENCES users (id) ON DELETE CASCADE,
    external_user_id TEXT,
    type             TEXT NOT NULL,
    sequence         INTEGER NOT NULL,
    payload          TEXT NOT NULL,
    created_at       INTEGER NOT NULL
);
CREATE INDEX events_client_created ON events (client_id, created_at);

CREATE TRIGGER events_append_only BEFORE UPDATE ON events
BEGIN
    SELECT RAISE(ABORT, 'events are append-only');
END;

-- RSA key pairs for card data JWE; the private key is sealed.
-- The first key is marked bootstrap, and only one such key can exist, so
-- that nodes starting together on an empty database agree on one key.
CREATE TABLE jwe_keys (
    kid            TEXT PRIMARY KEY,
    public_jwk     TEXT NOT NULL,
    private_sealed BLOB NOT NULL,
    bootstrap      INTEGER NOT NULL DEFAULT 0,
    created_at     INTEGER NOT NULL,
    retires_at     INTEGER
);
CREATE UNIQUE INDEX jwe_keys_one_bootstrap ON jwe_keys (bootstrap) WHERE bootstrap = 1;

-- A value sealed under the master key when the database was first used: a
-- process started with another key fails at start instead of later.
CREATE TABLE master_key_check (
    id     INTEGER PRIMARY KEY CHECK (id = 1),
    sealed BLOB NOT NULL
);
