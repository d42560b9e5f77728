-- Merchant connectors: the services that feed observed transactions and
-- subscriptions through the internal ingestion API. Only the SHA-256 of a
-- connector's secret is kept; a revoked connector stays listed.
CREATE TABLE connectors (
    id          TEXT PRIMARY KEY,
    name        TEXT NOT NULL,
    secret_hash BLOB NOT NULL,
    created_at  INTEGER NOT NULL,
    revoked_at  INTEGER
);
