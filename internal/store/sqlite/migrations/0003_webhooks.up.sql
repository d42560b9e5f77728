-- Webhook endpoints of a developer. The signing secret is sealed under the
-- master key (deliveries need it); during rotation the previous secret
-- keeps signing, beside the new one, until previous_expires_at.
-- event_types is a comma-separated filter ('' for every event).
CREATE TABLE webhook_endpoints (
    id                   TEXT PRIMARY KEY,
    client_id            TEXT NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    url                  TEXT NOT NULL,
    event_types          TEXT NOT NULL DEFAULT '',
    secret_sealed        BLOB NOT NULL,
    previous_sealed      BLOB,
    previous_expires_at  INTEGER,
    status               TEXT NOT NULL CHECK (status IN ('enabled', 'disabled')),
    disabled_reason      TEXT,
    failing_since        INTEGER,
    created_at           INTEGER NOT NULL,
    updated_at           INTEGER NOT NULL
);
CREATE INDEX webhook_endpoints_client ON webhook_endpoints (client_id, created_at);

-- Every delivery attempt of an event to an endpoint.
CREATE TABLE webhook_attempts (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    client_id      TEXT NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    event_id       TEXT NOT NULL REFERENCES events (id) ON DELETE CASCADE,
    endpoint_id    TEXT NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
    attempt        INTEGER NOT NULL,
    started_at     INTEGER NOT NULL,
    duration_us    INTEGER NOT NULL,
    status_code    INTEGER,
    response_body  TEXT NOT NULL DEFAULT '',
    error          TEXT NOT NULL DEFAULT '',
    outcome        TEXT NOT NULL CHECK (outcome IN ('succeeded', 'failed'))
);
CREATE INDEX webhook_attempts_event ON webhook_attempts (client_id, event_id, id);

-- Listing events by type or user reads these.
CREATE INDEX events_client_user ON events (client_id, external_user_id, created_at);
