-- The request log: one row per API request a developer's credentials
-- authenticated, kept for --request-log-retention and pruned by a job.
-- Bodies and the query are stored already redacted (internal/reqlog);
-- headers are never stored. request_id is the X-Request-Id answered, which
-- a caller may choose, so it is not unique.
CREATE TABLE request_logs (
    id                 bigserial PRIMARY KEY,
    client_id          text NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    request_id         text NOT NULL,
    created_at         timestamptz NOT NULL,
    method             text NOT NULL,
    path               text NOT NULL,
    query              text NOT NULL,
    status             integer NOT NULL,
    error_code         text NOT NULL,
    latency_us         bigint NOT NULL,
    ip                 text NOT NULL,
    external_user_id   text NOT NULL,
    request_body       text NOT NULL,
    response_body      text NOT NULL
);
CREATE INDEX request_logs_client ON request_logs (client_id, id);
CREATE INDEX request_logs_request_id ON request_logs (client_id, request_id);
-- The overview counts a day of one developer's requests.
CREATE INDEX request_logs_client_created ON request_logs (client_id, created_at);
CREATE INDEX request_logs_created ON request_logs (created_at);
