-- Versions of what a user's account listing and an account's sync pages are
-- rendered from, so that rendered responses can be kept in memory and
-- checked against the database on every request (internal/respcache).
--
-- A version is not a counter: every change sets a new random value, so that
-- a database restored or failed over to an earlier state cannot count up
-- again to a value a node has cached for other data. Triggers keep both
-- versions, so that no way of changing the data (an older node during a
-- rolling upgrade, a hand-written fix) can forget to.

-- users.accounts_version changes with the user's accounts. An update of
-- transaction_position alone (ingestion reserving sync positions) is not a
-- change to the listing.
ALTER TABLE users ADD COLUMN accounts_version INTEGER NOT NULL DEFAULT 0;

CREATE TRIGGER accounts_version_insert AFTER INSERT ON accounts BEGIN
    UPDATE users SET accounts_version = random() WHERE id = NEW.user_id;
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
    UPDATE users SET accounts_version = random() WHERE id IN (OLD.user_id, NEW.user_id);
END;

CREATE TRIGGER accounts_version_delete AFTER DELETE ON accounts BEGIN
    UPDATE users SET accounts_version = random() WHERE id = OLD.user_id;
END;

-- accounts.transactions_version changes with the account's transactions:
-- new ones always reserve positions on the account (one update per batch),
-- and a changed or removed one changes it per row.
ALTER TABLE accounts ADD COLUMN transactions_version INTEGER NOT NULL DEFAULT 0;

CREATE TRIGGER transactions_version_positions AFTER UPDATE OF transaction_position ON accounts
WHEN NEW.transaction_position <> OLD.transaction_position BEGIN
    UPDATE accounts SET transactions_version = random() WHERE id = NEW.id;
END;

CREATE TRIGGER transactions_version_update AFTER UPDATE ON transactions BEGIN
    UPDATE accounts SET transactions_version = random() WHERE id IN (OLD.account_id, NEW.account_id);
END;

CREATE TRIGGER transactions_version_delete AFTER DELETE ON transactions BEGIN
    UPDATE accounts SET transactions_version = random() WHERE id = OLD.account_id;
END;
