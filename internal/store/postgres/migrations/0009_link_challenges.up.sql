-- A login step of the hosted flow waiting for its answer (a code or a
-- security question). The browser holds the sealed challenge; this row
-- counts its answers and is spent by the right one or the last wrong one,
-- so a challenge handed back again can neither reset the count nor link
-- the account twice.
CREATE TABLE link_challenges (
    id         text PRIMARY KEY,
    client_id  text NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    session_id uuid NOT NULL,
    attempts   integer NOT NULL DEFAULT 0,
    spent      boolean NOT NULL DEFAULT FALSE,
    expires_at timestamptz NOT NULL,
    created_at timestamptz NOT NULL
);
CREATE INDEX link_challenges_expiry ON link_challenges (expires_at);
