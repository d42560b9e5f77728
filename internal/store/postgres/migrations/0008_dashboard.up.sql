-- The dashboard: a developer's team members, their sign-in sessions, the
-- merchants a developer hides from the link flow, and the audit log of what
-- members do.

-- A member signs in with an e-mail address, unique in the deployment, and
-- a password kept only as an argon2id hash (PHC string).
CREATE TABLE members (
    id              uuid PRIMARY KEY,
    client_id       text NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    email           text NOT NULL UNIQUE,
    name            text NOT NULL,
    role            text NOT NULL CHECK (role IN ('admin', 'developer', 'viewer')),
    password_hash   text NOT NULL,
    failed_attempts integer NOT NULL DEFAULT 0,
    locked_until    timestamptz,
    created_at      timestamptz NOT NULL,
    updated_at      timestamptz NOT NULL
);
CREATE INDEX members_client ON members (client_id, created_at);

-- A dashboard sign-in: only the SHA-256 of its cookie value is stored. It
-- ends at expires_at (absolute) or when idle past its idle timeout after
-- last_seen_at.
CREATE TABLE dashboard_sessions (
    id           uuid PRIMARY KEY,
    client_id    text NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    member_id    uuid NOT NULL REFERENCES members (id) ON DELETE CASCADE,
    token_hash   bytea NOT NULL UNIQUE,
    created_at   timestamptz NOT NULL,
    last_seen_at timestamptz NOT NULL,
    expires_at   timestamptz NOT NULL
);
CREATE INDEX dashboard_sessions_member ON dashboard_sessions (member_id);

-- Merchants a developer hides from its users in the hosted link flow.
CREATE TABLE hidden_merchants (
    client_id   text NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    merchant_id bigint NOT NULL,
    hidden_at   timestamptz NOT NULL,
    PRIMARY KEY (client_id, merchant_id)
);

-- The audit log: append-only, one hash chain per developer. seq counts
-- from 1 per developer (reserved on clients.audit_seq, which orders
-- writers), and hash is SHA-256 over the previous record's hash and this
-- record's fields (internal/audit, docs/audit.md), so that changing or
-- removing a record breaks the chain.
CREATE TABLE audit_records (
    id          uuid PRIMARY KEY,
    client_id   text NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    seq         bigint NOT NULL,
    created_at  timestamptz NOT NULL,
    action      text NOT NULL,
    outcome     text NOT NULL,
    actor_name  text NOT NULL,
    actor_email text NOT NULL,
    target_type text NOT NULL,
    target_name text,
    environment text NOT NULL,
    ip          text NOT NULL,
    user_agent  text NOT NULL,
    prev_hash   bytea,
    hash        bytea NOT NULL,
    UNIQUE (client_id, seq)
);
CREATE INDEX audit_records_time ON audit_records (client_id, created_at);

ALTER TABLE clients ADD COLUMN audit_seq bigint NOT NULL DEFAULT 0;
