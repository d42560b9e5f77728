-- Versions of what a user's account listing and an account's sync pages are
-- rendered from, so that rendered responses can be kept in memory and
-- checked against the database on every request (internal/respcache).
--
-- A version is not a counter: every change sets a new random value, so that
-- a database restored or failed over to an earlier state cannot count up
-- again to a value a node has cached for other data. Triggers keep both
-- versions, so that no way of changing the data (an older node during a
-- rolling upgrade, a hand-written fix) can forget to. The functions keep
-- the search_path of the migration, so that they update this schema's
-- tables whatever the caller's.

-- users.accounts_version changes with the user's accounts. An update of
-- transaction_position alone (ingestion reserving sync positions) is not a
-- change to the listing.
ALTER TABLE users ADD COLUMN accounts_version bigint NOT NULL DEFAULT 0;

CREATE FUNCTION accounts_version_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        UPDATE users SET accounts_version = hitch_version() WHERE id = NEW.user_id;
    ELSIF TG_OP = 'DELETE' THEN
        UPDATE users SET accounts_version = hitch_version() WHERE id = OLD.user_id;
    ELSE
        UPDATE users SET accounts_version = hitch_version() WHERE id IN (OLD.user_id, NEW.user_id);
    END IF;
    RETURN NULL;
END
$$;

-- hitch_version is a new random version.
CREATE FUNCTION hitch_version() RETURNS bigint LANGUAGE sql VOLATILE AS $$
    SELECT (random() * 4.0e18)::bigint
$$;

CREATE TRIGGER accounts_version_insert_delete AFTER INSERT OR DELETE ON accounts
    FOR EACH ROW EXECUTE FUNCTION accounts_version_change();

CREATE TRIGGER accounts_version_update AFTER UPDATE OF
    user_id, merchant_id, connection_status, scopes,
    lifecycle_card_switcher, lifecycle_transaction_link, lifecycle_vault, lifecycle_latest,
    last_action_at, last_action_status,
    action_at_card_switcher, action_status_card_switcher,
    action_at_transaction_link, action_status_transaction_link,
    action_at_vault, action_status_vault,
    linked_at, unlinked_at, created_at, updated_at
ON accounts FOR EACH ROW EXECUTE FUNCTION accounts_version_change();

-- accounts.transactions_version changes with the account's transactions:
-- new ones always reserve positions on the account (one update per batch),
-- and a changed or removed one changes it per row.
ALTER TABLE accounts ADD COLUMN transactions_version bigint NOT NULL DEFAULT 0;

CREATE FUNCTION transactions_version_positions() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.transactions_version := hitch_version();
    RETURN NEW;
END
$$;

CREATE TRIGGER transactions_version_positions BEFORE UPDATE OF transaction_position ON accounts
    FOR EACH ROW WHEN (NEW.transaction_position <> OLD.transaction_position)
    EXECUTE FUNCTION transactions_version_positions();

CREATE FUNCTION transactions_version_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        UPDATE accounts SET transactions_version = hitch_version() WHERE id = OLD.account_id;
    ELSE
        UPDATE accounts SET transactions_version = hitch_version() WHERE id IN (OLD.account_id, NEW.account_id);
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER transactions_version_change AFTER UPDATE OR DELETE ON transactions
    FOR EACH ROW EXECUTE FUNCTION transactions_version_change();

ALTER FUNCTION accounts_version_change() SET search_path FROM CURRENT;
ALTER FUNCTION transactions_version_change() SET search_path FROM CURRENT;
ALTER FUNCTION transactions_version_positions() SET search_path FROM CURRENT;
