-- The dashboard: a developer's team members, their sign-in sessions, the
-- merchants a developer hides from the link flow, and the audit log of what
-- members do.

-- A member signs in with an e-mail address, unique in the deployment, and
-- a password kept only as an argon2id hash (PHC string).
CREATE TABLE members (
    id              TEXT PRIMARY KEY,
    client_id       TEXT NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    email           TEXT NOT NULL UNIQUE,
    name            TEXT NOT NULL,
    role            TEXT NOT NULL CHECK (role IN ('admin', 'developer', 'viewer')),
    password_hash   TEXT NOT NULL,
    failed_attempts INTEGER NOT NULL DEFAULT 0,
    locked_until    INTEGER,
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL
);
CREATE INDEX members_client ON members (client_id, created_at);

-- A dashboard sign-in: only the SHA-256 of its cookie value is stored. It
-- ends at expires_at (absolute) or when idle past its idle timeout after
-- last_seen_at.
CREATE TABLE dashboard_sessions (
    id           TEXT PRIMARY KEY,
    client_id    TEXT NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    member_id    TEXT NOT NULL REFERENCES members (id) ON DELETE CASCADE,
    token_hash   BLOB NOT NULL UNIQUE,
    created_at   INTEGER NOT NULL,
    last_seen_at INTEGER NOT NULL,
    expires_at   INTEGER NOT NULL
);
CREATE INDEX dashboard_sessions_member ON dashboard_sessions (member_id);

-- Merchants a developer hides from its users in the hosted link flow.
CREATE TABLE hidden_merchants (
    client_id   TEXT NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    merchant_id INTEGER NOT NULL,
    hidden_at   INTEGER NOT NULL,
    PRIMARY KEY (client_id, merchant_id)
);

-- The audit log: append-only, one hash chain per developer. seq counts
-- from 1 per developer (reserved on clients.audit_seq, which orders
-- writers), and hash is SHA-256 over the previous record's hash and this
-- record's fields (internal/audit, docs/audit.md), so that changing or
-- removing a record breaks the chain.
CREATE TABLE audit_records (
    id          TEXT PRIMARY KEY,
    client_id   TEXT NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    seq         INTEGER NOT NULL,
    created_at  INTEGER NOT NULL,
    action      TEXT NOT NULL,
    outcome     TEXT NOT NULL,
    actor_name  TEXT NOT NULL,
    actor_email TEXT NOT NULL,
    target_type TEXT NOT NULL,
    target_name TEXT,
    environment TEXT NOT NULL,
    ip          TEXT NOT NULL,
    user_agent  TEXT NOT NULL,
    prev_hash   BLOB,
    hash        BLOB NOT NULL,
    UNIQUE (client_id, seq)
);
CREATE INDEX audit_records_time ON audit_records (client_id, created_at);

ALTER TABLE clients ADD COLUMN audit_seq INTEGER NOT NULL DEFAULT 0;
