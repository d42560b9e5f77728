-- The metadata of an account's most recent link (the session's, or
-- POST /development/accounts/link's), echoed in every event about the
-- account: ACCOUNT_LOGIN_REQUIRED, transactions and subscriptions from
-- refreshes, card switches posted without a login. NULL for none.
ALTER TABLE accounts ADD COLUMN metadata TEXT;

-- Accounts linked before keep theirs: it is the data.metadata of the
-- account's latest AUTHENTICATED event (events are never deleted).
UPDATE accounts SET metadata = (
    SELECT json_extract(e.payload, '$.data.metadata')
    FROM events e JOIN users u ON u.id = accounts.user_id
    WHERE e.client_id = accounts.client_id AND e.external_user_id = u.external_user_id
      AND e.type = 'AUTHENTICATED' AND json_extract(e.payload, '$.merchant.id') = accounts.merchant_id
    ORDER BY e.sequence DESC
    LIMIT 1);
