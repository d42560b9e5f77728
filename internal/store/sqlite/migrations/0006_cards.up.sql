-- The last user action per product, next to the lifecycle columns: a card
-- switch that ends after its login is an action of the card switcher only.
ALTER TABLE accounts ADD COLUMN action_at_card_switcher INTEGER;
ALTER TABLE accounts ADD COLUMN action_status_card_switcher TEXT;
ALTER TABLE accounts ADD COLUMN action_at_transaction_link INTEGER;
ALTER TABLE accounts ADD COLUMN action_status_transaction_link TEXT;
ALTER TABLE accounts ADD COLUMN action_at_vault INTEGER;
ALTER TABLE accounts ADD COLUMN action_status_vault TEXT;

-- Tasks: the work a login starts at a merchant (switching the card on file,
-- or vaulting the one there). id is random below 2^53, so it reads the same
-- in JavaScript and says nothing of other developers' volume. card_sealed is
-- the card without its CVV, sealed under the master key, only while a
-- production task waits for its connector; the CVV is never written.
CREATE TABLE tasks (
    id             INTEGER PRIMARY KEY,
    client_id      TEXT NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    external_user_id TEXT NOT NULL,
    user_id        TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    account_id     TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    merchant_id    INTEGER NOT NULL,
    product        TEXT NOT NULL CHECK (product IN ('card_switcher', 'vault')),
    card_id        TEXT,
    session_id     TEXT,
    status         TEXT NOT NULL CHECK (status IN ('awaiting_card', 'pending', 'succeeded', 'failed')),
    reason         TEXT,
    card_sealed    BLOB,
    card_brand     TEXT,
    card_last_four TEXT,
    card_exp_month INTEGER,
    card_exp_year  INTEGER,
    metadata       TEXT,
    card_deadline  INTEGER,
    claimed_at     INTEGER,
    created_at     INTEGER NOT NULL,
    updated_at     INTEGER NOT NULL,
    finished_at    INTEGER
);
CREATE INDEX tasks_account ON tasks (account_id, created_at);
CREATE INDEX tasks_pending ON tasks (merchant_id, created_at) WHERE status = 'pending' AND claimed_at IS NULL;
