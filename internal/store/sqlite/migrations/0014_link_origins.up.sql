-- The web origins each developer allows to embed its hosted link flow in a
-- frame: /link is served with frame-ancestors naming exactly these (and
-- Hitch's own origin). One row per developer holding the whole list,
-- comma-separated ("scheme://host[:port]", validated by internal/link), so
-- that replacing the list is one statement and concurrent replacements
-- never merge. A developer without a row has registered none: the
-- environment's default applies (docs/link.md).
CREATE TABLE link_origins (
    client_id  TEXT PRIMARY KEY REFERENCES clients (id) ON DELETE CASCADE,
    origins    TEXT NOT NULL,
    updated_at INTEGER NOT NULL
);
