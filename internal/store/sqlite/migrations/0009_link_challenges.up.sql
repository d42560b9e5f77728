-- A login step of the hosted flow waiting for its answer (a code or a
-- security question). The browser holds the sealed challenge; this row
-- counts its answers and is spent by the right one or the last wrong one,
-- so a challenge handed back again can neither reset the count nor link
-- the account twice.
CREATE TABLE link_challenges (
    id         TEXT PRIMARY KEY,
    client_id  TEXT NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    session_id TEXT NOT NULL,
    attempts   INTEGER NOT NULL DEFAULT 0,
    spent      BOOLEAN NOT NULL DEFAULT FALSE,
    expires_at INTEGER NOT NULL,
    created_at INTEGER NOT NULL
);
CREATE INDEX link_challenges_expiry ON link_challenges (expires_at);
