-- Every step of a login at a merchant (login_started, otp_required,
-- questions_required, authenticated, login_failed), appended in the
-- transaction that sets the account's lifecycle, or on its own for a
-- user's first login there, which has no account yet: the lifecycle
-- columns keep only the latest step, and the dashboard charts outcomes
-- over time.
CREATE TABLE account_logins (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    client_id   TEXT NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    user_id     TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    account_id  TEXT REFERENCES accounts (id) ON DELETE CASCADE, -- NULL: a first login
    merchant_id INTEGER NOT NULL,
    product     TEXT NOT NULL,
    status      TEXT NOT NULL,
    created_at  INTEGER NOT NULL
);
CREATE INDEX account_logins_client_created ON account_logins (client_id, created_at);
CREATE INDEX account_logins_account ON account_logins (account_id);
CREATE INDEX account_logins_client_user ON account_logins (client_id, user_id, created_at);

-- The dashboard's health pages read one developer's rows of a time window.
CREATE INDEX webhook_attempts_client_started ON webhook_attempts (client_id, started_at);
CREATE INDEX tasks_client_finished ON tasks (client_id, finished_at);
CREATE INDEX tasks_client_user ON tasks (client_id, user_id, created_at);
CREATE INDEX detection_requests_client_created ON detection_requests (client_id, created_at);
CREATE INDEX detected_accounts_client_detected ON detected_accounts (client_id, detected_at);
