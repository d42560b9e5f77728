-- Listing a user's accounts reads them in link order. With the order in the
-- index, neither engine sorts the rows per request.
DROP INDEX accounts_client_user;
CREATE INDEX accounts_client_user_linked ON accounts (client_id, user_id, linked_at, merchant_id);
