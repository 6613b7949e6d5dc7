DROP INDEX IF EXISTS jobs_account_created;
