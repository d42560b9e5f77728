-- The River job that made each attempt. A delivery's job is completed by
-- River after its successful attempt commits; if the process dies between
-- the two, River runs the job again, and the worker finds this job's
-- succeeded attempt instead of sending the event a second time.
ALTER TABLE webhook_attempts ADD COLUMN job_id BIGINT;
