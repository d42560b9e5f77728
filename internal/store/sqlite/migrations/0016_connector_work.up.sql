-- What each connector says it serves (a JSON array of catalog merchant ids;
-- NULL until it declares) and when it last called Hitch, which routes work
-- only to connectors seen recently.
ALTER TABLE connectors ADD COLUMN merchant_ids TEXT;
ALTER TABLE connectors ADD COLUMN last_seen_at INTEGER;

-- Units of work for connectors: logins from the hosted flow and scheduled
-- refreshes of linked accounts. A connector claims one with a lease it
-- renews; input_sealed holds the user's credentials, later an answer,
-- sealed under the master key and erased when the connector takes it.
CREATE TABLE connector_work (
    id               TEXT PRIMARY KEY,
    kind             TEXT NOT NULL,
    client_id        TEXT NOT NULL,
    external_user_id TEXT NOT NULL,
    merchant_id      INTEGER NOT NULL,
    product          TEXT NOT NULL,
    status           TEXT NOT NULL,
    question         TEXT,
    reason           TEXT,
    input_sealed     BLOB,
    connector_id     TEXT,
    lease_hash       BLOB,
    lease_until      INTEGER,
    attempts         INTEGER NOT NULL DEFAULT 0,
    created_at       INTEGER NOT NULL,
    updated_at       INTEGER NOT NULL
);
CREATE INDEX connector_work_pending ON connector_work (merchant_id, created_at) WHERE status = 'pending';
CREATE INDEX connector_work_leased ON connector_work (lease_until) WHERE lease_until IS NOT NULL;
CREATE INDEX connector_work_created ON connector_work (created_at);
-- One open refresh per account at a time.
CREATE UNIQUE INDEX connector_work_refresh ON connector_work (client_id, external_user_id, merchant_id)
    WHERE kind = 'refresh' AND status IN ('pending', 'claimed');

-- A connector's saved merchant session (cookies) per linked account, sealed
-- under the master key, and when the account is next refreshed.
CREATE TABLE connector_states (
    client_id        TEXT NOT NULL,
    external_user_id TEXT NOT NULL,
    merchant_id      INTEGER NOT NULL,
    state_sealed     BLOB,
    next_refresh_at  INTEGER NOT NULL,
    last_refresh_at  INTEGER,
    updated_at       INTEGER NOT NULL,
    PRIMARY KEY (client_id, external_user_id, merchant_id)
);
CREATE INDEX connector_states_due ON connector_states (next_refresh_at);
