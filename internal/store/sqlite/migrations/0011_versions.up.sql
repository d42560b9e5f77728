-- Versions of what a user's account listing and an account's sync pages are
-- rendered from, so that rendered responses can be kept in memory and
-- checked against the database on every request (internal/respcache).

-- users.accounts_version counts changes to the user's accounts. Triggers
-- keep it, so that no way of changing an account can forget to; an update
-- of transaction_position alone (ingestion reserving sync positions) is not
-- a change to the listing.
ALTER TABLE users ADD COLUMN accounts_version INTEGER NOT NULL DEFAULT 0;

CREATE TRIGGER accounts_version_insert AFTER INSERT ON accounts BEGIN
    UPDATE users SET accounts_version = accounts_version + 1 WHERE id = NEW.user_id;
END;

CREATE TRIGGER accounts_version_update AFTER UPDATE OF
    user_id, merchant_id, connection_status, scopes,
    lifecycle_card_switcher, lifecycle_transaction_link, lifecycle_vault, lifecycle_latest,
    last_action_at, last_action_status,
    action_at_card_switcher, action_status_card_switcher,
    action_at_transaction_link, action_status_transaction_link,
    action_at_vault, action_status_vault,
    linked_at, unlinked_at, created_at, updated_at
ON accounts BEGIN
    UPDATE users SET accounts_version = accounts_version + 1 WHERE id IN (OLD.user_id, NEW.user_id);
END;

CREATE TRIGGER accounts_version_delete AFTER DELETE ON accounts BEGIN
    UPDATE users SET accounts_version = accounts_version + 1 WHERE id = OLD.user_id;
END;

-- accounts.transactions_version counts ingestion batches that inserted or
-- changed the account's transactions (internal/transaction bumps it in the
-- batch's transaction).
ALTER TABLE accounts ADD COLUMN transactions_version INTEGER NOT NULL DEFAULT 0;
