-- An account's jobs are counted by state since a time (the console's
-- dashboard: today's sends by outcome). The index holds the account and
-- the creation time, neither of which a job's moves change, so it is
-- written once per job and never updated.
CREATE INDEX IF NOT EXISTS jobs_account_created ON jobs (account_id, created_ms);
