-- Developer accounts (tenants) and their API secrets. Secrets are kept as a
-- SHA-256 hash for lookup plus a copy sealed under the master key.
CREATE TABLE clients (
    id          text PRIMARY KEY,
    name        text NOT NULL,
    environment text NOT NULL CHECK (environment IN ('development', 'production')),
    created_at  timestamptz NOT NULL
);

CREATE TABLE client_secrets (
    id         uuid PRIMARY KEY,
    client_id  text NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    hash       bytea NOT NULL UNIQUE,
    sealed     bytea NOT NULL,
    created_at timestamptz NOT NULL,
    expires_at timestamptz
);
CREATE INDEX client_secrets_client_id ON client_secrets (client_id);

-- End users of a developer, by the developer's external_user_id.
CREATE TABLE users (
    id               uuid PRIMARY KEY,
    client_id        text NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    external_user_id text NOT NULL,
    event_sequence   bigint NOT NULL DEFAULT 0,
    created_at       timestamptz NOT NULL,
    UNIQUE (client_id, external_user_id)
);

-- SDK sessions. Only the SHA-256 of the session value is stored.
CREATE TABLE sessions (
    id                     uuid PRIMARY KEY,
    client_id              text NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    user_id                uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    type                   text NOT NULL CHECK (type IN ('card_switcher', 'transaction_link', 'link', 'vault')),
    token_hash             bytea NOT NULL UNIQUE,
    card_id                text,
    merchant_id            bigint,
    email                  text,
    phone_number           text,
    processor_token_sealed bytea,
    metadata               json, -- json, not jsonb: kept byte for byte
    created_at             timestamptz NOT NULL,
    expires_at             timestamptz NOT NULL
);
CREATE INDEX sessions_client_user ON sessions (client_id, user_id);

-- Merchant accounts of a user. Unlinking keeps the row (unlinked_at) so that
-- linking again reuses its id and history. scopes is a comma-separated list of
-- scope types (identifiers).
CREATE TABLE accounts (
    id                 uuid PRIMARY KEY,
    client_id          text NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    user_id            uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    merchant_id        bigint NOT NULL,
    connection_status  text NOT NULL CHECK (connection_status IN ('connected', 'disconnected')),
    scopes             text NOT NULL DEFAULT '',
    -- Status of the latest login attempt per product, and of any product.
    lifecycle_card_switcher    text,
    lifecycle_transaction_link text,
    lifecycle_vault            text,
    lifecycle_latest           text,
    last_action_at     timestamptz,
    last_action_status text,
    linked_at          timestamptz NOT NULL,
    unlinked_at        timestamptz,
    created_at         timestamptz NOT NULL,
    updated_at         timestamptz NOT NULL,
    UNIQUE (user_id, merchant_id)
);
CREATE INDEX accounts_client_user ON accounts (client_id, user_id);

-- Append-only record of every event, with the envelope webhooks deliver.
CREATE TABLE events (
    id               uuid PRIMARY KEY,
    client_id        text NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    user_id          uuid REFERENCES users (id) ON DELETE CASCADE,
    external_user_id text,
    type             text NOT NULL,
    sequence         bigint NOT NULL,
    payload          json NOT NULL, -- json, not jsonb: every delivery sends the same bytes
    created_at       timestamptz NOT NULL
);
CREATE INDEX events_client_created ON events (client_id, created_at);

CREATE FUNCTION events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'events are append-only';
END;
$$;
CREATE TRIGGER events_append_only BEFORE UPDATE ON events
    FOR EACH ROW EXECUTE FUNCTION events_append_only();

-- RSA key pairs for card data JWE; the private key is sealed. The first key
-- is marked bootstrap, and only one such key can exist, so that nodes
-- starting together on an empty database agree on one key.
CREATE TABLE jwe_keys (
    kid            text PRIMARY KEY,
    public_jwk     json NOT NULL,
    private_sealed bytea NOT NULL,
    bootstrap      boolean NOT NULL DEFAULT false,
    created_at     timestamptz NOT NULL,
    retires_at     timestamptz
);
CREATE UNIQUE INDEX jwe_keys_one_bootstrap ON jwe_keys (bootstrap) WHERE bootstrap;

-- A value sealed under the master key when the database was first used: a
-- process started with another key fails at start instead of later.
CREATE TABLE master_key_check (
    id     integer PRIMARY KEY CHECK (id = 1),
    sealed bytea NOT NULL
);
