-- A member's e-mail is unique within its developer, not in the deployment:
-- one person may be a member of several developers, and adding a member
-- must not tell one developer that an e-mail is a member elsewhere. The
-- unique key is (email, client_id), so that its index also serves
-- sign-in's lookup by e-mail.
ALTER TABLE members DROP CONSTRAINT members_email_key;
ALTER TABLE members ADD CONSTRAINT members_email_client_key UNIQUE (email, client_id);

-- Set when someone else chose the password (hitch members add, an admin);
-- the member then chooses their own before using the dashboard. Every
-- existing member's password was chosen that way (there was no way to
-- change one), so every existing member has it set.
ALTER TABLE members ADD COLUMN must_change_password boolean NOT NULL DEFAULT true;
ALTER TABLE members ALTER COLUMN must_change_password SET DEFAULT false;
