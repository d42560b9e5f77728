-- A member's e-mail is unique within its developer, not in the deployment:
-- one person may be a member of several developers, and adding a member
-- must not tell one developer that an e-mail is a member elsewhere. The
-- unique key is (email, client_id), so that its index also serves
-- sign-in's lookup by e-mail.
--
-- must_change_password is set when someone else chose the password (hitch
-- members add, an admin); the member then chooses their own before using
-- the dashboard. Every existing member's password was chosen that way
-- (there was no way to change one), so every existing member has it set.
--
-- SQLite cannot drop a column's UNIQUE constraint, so members is rebuilt.
-- Migrations run in a transaction with foreign keys enforced, where
-- PRAGMA foreign_keys cannot be turned off, and dropping a table with
-- foreign keys on deletes its rows first, which would cascade to the
-- sign-ins that reference it. So the sign-ins are rebuilt too, referencing
-- the new table from the start: dropping the old sign-ins and then the old
-- members (referenced by nothing any more) deletes nothing that is kept,
-- and renaming the new members table rewrites the sign-ins' reference.
CREATE TABLE members_0011 (
    id                   TEXT PRIMARY KEY,
    client_id            TEXT NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    email                TEXT NOT NULL,
    name                 TEXT NOT NULL,
    role                 TEXT NOT NULL CHECK (role IN ('admin', 'developer', 'viewer')),
    password_hash        TEXT NOT NULL,
    failed_attempts      INTEGER NOT NULL DEFAULT 0,
    locked_until         INTEGER,
    must_change_password BOOLEAN NOT NULL DEFAULT FALSE,
    created_at           INTEGER NOT NULL,
    updated_at           INTEGER NOT NULL,
    UNIQUE (email, client_id)
);
INSERT INTO members_0011 (id, client_id, email, name, role, password_hash, failed_attempts, locked_until,
        must_change_password, created_at, updated_at)
    SELECT id, client_id, email, name, role, password_hash, failed_attempts, locked_until, TRUE, created_at, updated_at
    FROM members;

CREATE TABLE dashboard_sessions_0011 (
    id           TEXT PRIMARY KEY,
    client_id    TEXT NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    member_id    TEXT NOT NULL REFERENCES members_0011 (id) ON DELETE CASCADE,
    token_hash   BLOB NOT NULL UNIQUE,
    created_at   INTEGER NOT NULL,
    last_seen_at INTEGER NOT NULL,
    expires_at   INTEGER NOT NULL
);
INSERT INTO dashboard_sessions_0011 (id, client_id, member_id, token_hash, created_at, last_seen_at, expires_at)
    SELECT id, client_id, member_id, token_hash, created_at, last_seen_at, expires_at FROM dashboard_sessions;

DROP TABLE dashboard_sessions;
DROP TABLE members;
ALTER TABLE members_0011 RENAME TO members;
ALTER TABLE dashboard_sessions_0011 RENAME TO dashboard_sessions;
CREATE INDEX members_client ON members (client_id, created_at);
CREATE INDEX dashboard_sessions_member ON dashboard_sessions (member_id);
