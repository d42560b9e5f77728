-- The last user action per product, next to the lifecycle columns: a card
-- switch that ends after its login is an action of the card switcher only.
ALTER TABLE accounts
    ADD COLUMN action_at_card_switcher timestamptz,
    ADD COLUMN action_status_card_switcher text,
    ADD COLUMN action_at_transaction_link timestamptz,
    ADD COLUMN action_status_transaction_link text,
    ADD COLUMN action_at_vault timestamptz,
    ADD COLUMN action_status_vault text;

-- Tasks: the work a login starts at a merchant (switching the card on file,
-- or vaulting the one there). id is random below 2^53, so it reads the same
-- in JavaScript and says nothing of other developers' volume. card_sealed is
-- the card without its CVV, sealed under the master key, only while a
-- production task waits for its connector; the CVV is never written.
CREATE TABLE tasks (
    id             bigint PRIMARY KEY,
    client_id      text NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    external_user_id text NOT NULL,
    user_id        uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    account_id     uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    merchant_id    bigint NOT NULL,
    product        text NOT NULL CHECK (product IN ('card_switcher', 'vault')),
    card_id        text,
    session_id     uuid,
    status         text NOT NULL CHECK (status IN ('awaiting_card', 'pending', 'succeeded', 'failed')),
    reason         text,
    card_sealed    bytea,
    card_brand     text,
    card_last_four text,
    card_exp_month integer,
    card_exp_year  integer,
    metadata       json,
    card_deadline  timestamptz,
    claimed_at     timestamptz,
    created_at     timestamptz NOT NULL,
    updated_at     timestamptz NOT NULL,
    finished_at    timestamptz
);
CREATE INDEX tasks_account ON tasks (account_id, created_at);
CREATE INDEX tasks_pending ON tasks (merchant_id, created_at) WHERE status = 'pending' AND claimed_at IS NULL;
