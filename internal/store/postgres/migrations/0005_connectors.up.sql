-- Merchant connectors: the services that feed observed transactions and
-- subscriptions through the internal ingestion API. Only the SHA-256 of a
-- connector's secret is kept; a revoked connector stays listed.
CREATE TABLE connectors (
    id          text PRIMARY KEY,
    name        text NOT NULL,
    secret_hash bytea NOT NULL,
    created_at  timestamptz NOT NULL,
    revoked_at  timestamptz
);
