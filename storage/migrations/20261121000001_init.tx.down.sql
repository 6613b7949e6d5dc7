DROP TABLE IF EXISTS backlog;
--bun:split
DROP TABLE IF EXISTS points_ledger;
--bun:split
DROP TABLE IF EXISTS idempotency;
--bun:split
DROP TABLE IF EXISTS jobs;
--bun:split
DROP TABLE IF EXISTS targets;
--bun:split
DROP TABLE IF EXISTS bots;
--bun:split
DROP TABLE IF EXISTS api_keys;
--bun:split
DROP TABLE IF EXISTS accounts;
