-- Failed logins of the hosted flow per session (wrong credentials), so that
-- one session value cannot try credentials without end from rotating IPs.
-- A login reserves a failure before it asks the authenticator and gives it
-- back unless the credentials were wrong: concurrent logins count exactly.
ALTER TABLE sessions ADD COLUMN login_failures INTEGER NOT NULL DEFAULT 0;
