-- Every move of a job changed its entry in jobs_state, which held every
-- job ever sent. The engine looks jobs up by state only for the active
-- ones (queued and running: the sweeper, recovery, the reconciler), in
-- the order of seq, so the index holds those alone: a job enters it when
-- it is queued and leaves it when it is settled, and it stays small.
-- (The condition is written with OR: SQLite uses a partial index for
-- "state = 'queued'" when it implies one side of an OR, not an IN list.)
-- jobs_account was never read.
DROP INDEX IF EXISTS jobs_state;
--bun:split
DROP INDEX IF EXISTS jobs_account;
--bun:split
CREATE INDEX IF NOT EXISTS jobs_active ON jobs (state, seq, expires_ms) WHERE state = 'queued' OR state = 'running';
