-- Detection requests are checked by connectors, one unit of work per
-- merchant a connector declared: a detect unit names its request.
ALTER TABLE connector_work ADD COLUMN request_id TEXT;
CREATE INDEX connector_work_request ON connector_work (request_id) WHERE request_id IS NOT NULL;
