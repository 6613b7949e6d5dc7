DELETE FROM auth_epoch WHERE id = 2;
--bun:split
DROP TABLE IF EXISTS audit;
--bun:split
DROP TABLE IF EXISTS invites;
--bun:split
DROP TABLE IF EXISTS sessions;
--bun:split
DROP TABLE IF EXISTS users;
--bun:split
DROP INDEX IF EXISTS points_ledger_initial;
--bun:split
DROP INDEX IF EXISTS jobs_account;
