DROP INDEX IF EXISTS jobs_active;
--bun:split
CREATE INDEX IF NOT EXISTS jobs_state ON jobs (state, expires_ms);
--bun:split
CREATE INDEX IF NOT EXISTS jobs_account ON jobs (account_id, seq);
