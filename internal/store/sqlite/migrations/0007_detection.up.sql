-- Detection: which merchant accounts a user has, found from an e-mail
-- address, a phone number or an aggregator's token.

-- A detection request is one run of detection for a user. Its inputs are
-- personal data and a credential: sealed under the master key, never
-- stored in the clear. In development the simulator works it at once; in
-- production it waits for a connector (status pending) until one reports.
CREATE TABLE detection_requests (
    id                     TEXT PRIMARY KEY,
    client_id              TEXT NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    user_id                TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    session_id             TEXT,
    email_sealed           BLOB,
    phone_sealed           BLOB,
    processor_token_sealed BLOB,
    metadata               TEXT,
    status                 TEXT NOT NULL CHECK (status IN ('pending', 'done')),
    found                  INTEGER,
    created_at             INTEGER NOT NULL,
    finished_at            INTEGER
);
CREATE INDEX detection_requests_pending ON detection_requests (created_at) WHERE status = 'pending';
CREATE INDEX detection_requests_user ON detection_requests (user_id, created_at);

-- A detected account: a catalog merchant (merchant_id) or one known only
-- by name. name_key makes detecting it again a no-op: "#<merchant id>" for
-- a catalog merchant, the name's matching key otherwise. position orders a
-- user's detections for cursors, reserved on users.detection_position.
CREATE TABLE detected_accounts (
    id                 TEXT PRIMARY KEY,
    client_id          TEXT NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    user_id            TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    merchant_id        INTEGER,
    name               TEXT NOT NULL,
    name_key           TEXT NOT NULL,
    login_method       TEXT NOT NULL,
    account_created_at INTEGER,
    source             TEXT NOT NULL CHECK (source IN ('email', 'phone', 'processor_token')),
    position           INTEGER NOT NULL,
    detected_at        INTEGER NOT NULL,
    UNIQUE (user_id, name_key)
);
CREATE INDEX detected_accounts_position ON detected_accounts (user_id, position);

ALTER TABLE users ADD COLUMN detection_position INTEGER NOT NULL DEFAULT 0;

-- Sessions kept the e-mail and phone number given for detection in the
-- clear; the detection request now keeps them, sealed. Erase the old copies.
UPDATE sessions SET email = NULL, phone_number = NULL WHERE email IS NOT NULL OR phone_number IS NOT NULL;
