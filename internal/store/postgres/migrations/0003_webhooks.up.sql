-- Webhook endpoints of a developer. The signing secret is sealed under the
-- master key (deliveries need it); during rotation the previous secret
-- keeps signing, beside the new one, until previous_expires_at.
-- event_types is a comma-separated filter ('' for every event).
CREATE TABLE webhook_endpoints (
    id                   text PRIMARY KEY,
    client_id            text NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    url                  text NOT NULL,
    event_types          text NOT NULL DEFAULT '',
    secret_sealed        bytea NOT NULL,
    previous_sealed      bytea,
    previous_expires_at  timestamptz,
    status               text NOT NULL CHECK (status IN ('enabled', 'disabled')),
    disabled_reason      text,
    failing_since        timestamptz,
    created_at           timestamptz NOT NULL,
    updated_at           timestamptz NOT NULL
);
CREATE INDEX webhook_endpoints_client ON webhook_endpoints (client_id, created_at);

-- Every delivery attempt of an event to an endpoint.
CREATE TABLE webhook_attempts (
    id             bigserial PRIMARY KEY,
    client_id      text NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    event_id       uuid NOT NULL REFERENCES events (id) ON DELETE CASCADE,
    endpoint_id    text NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
    attempt        integer NOT NULL,
    started_at     timestamptz NOT NULL,
    duration_us    bigint NOT NULL,
    status_code    integer,
    response_body  text NOT NULL DEFAULT '',
    error          text NOT NULL DEFAULT '',
    outcome        text NOT NULL CHECK (outcome IN ('succeeded', 'failed'))
);
CREATE INDEX webhook_attempts_event ON webhook_attempts (client_id, event_id, id);

-- Listing events by type or user reads these.
CREATE INDEX events_client_user ON events (client_id, external_user_id, created_at);
