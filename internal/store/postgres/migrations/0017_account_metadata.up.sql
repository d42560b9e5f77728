-- The metadata of an account's most recent link (the session's, or
-- POST /development/accounts/link's), echoed in every event about the
-- account: ACCOUNT_LOGIN_REQUIRED, transactions and subscriptions from
-- refreshes, card switches posted without a login. NULL for none; json,
-- not jsonb, so that the echo keeps the bytes given.
ALTER TABLE accounts ADD COLUMN metadata json;

-- Accounts linked before keep theirs: it is the data.metadata of the
-- account's latest AUTHENTICATED event (events are never deleted).
UPDATE accounts a SET metadata = (
    SELECT e.payload -> 'data' -> 'metadata'
    FROM events e JOIN users u ON u.id = a.user_id
    WHERE e.client_id = a.client_id AND e.external_user_id = u.external_user_id
      AND e.type = 'AUTHENTICATED' AND (e.payload -> 'merchant' ->> 'id')::bigint = a.merchant_id
    ORDER BY e.sequence DESC
    LIMIT 1);
