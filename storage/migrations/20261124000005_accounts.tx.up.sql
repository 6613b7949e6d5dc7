-- People who sign in, their sessions and invites, the audit trail, the
-- listing of jobs, and the initial points as a ledger row (the columns
-- they need came with migration 4). Times are Unix milliseconds.
-- Jobs are listed per account, newest first.
CREATE INDEX IF NOT EXISTS jobs_account ON jobs (account_id, seq);
--bun:split
-- An account gets its initial points once: at creation for an account an
-- operator makes, or at its first sign-in.
CREATE UNIQUE INDEX IF NOT EXISTS points_ledger_initial ON points_ledger (account_id) WHERE kind = 'initial';
--bun:split
-- The accounts made before recorded their initial points as the balance
-- alone: the row explains what the ledger does not.
INSERT INTO points_ledger (account_id, kind, amount, created_ms, note)
SELECT a.id, 'initial', a.points - COALESCE((SELECT SUM(l.amount) FROM points_ledger l WHERE l.account_id = a.id), 0), a.created_ms,
       'initial points, granted before the ledger recorded them'
FROM accounts a
WHERE NOT EXISTS (SELECT 1 FROM points_ledger l WHERE l.account_id = a.id AND l.kind = 'initial');
--bun:split
CREATE TABLE IF NOT EXISTS users (
    id          {{.ID}},
    account_id  BIGINT NOT NULL REFERENCES accounts (id),
    email       TEXT   NOT NULL UNIQUE,
    password    TEXT   NOT NULL,
    role        TEXT   NOT NULL,
    created_ms  BIGINT NOT NULL,
    password_ms BIGINT NOT NULL,
    signin_ms   BIGINT NOT NULL DEFAULT 0
);
--bun:split
CREATE INDEX IF NOT EXISTS users_account ON users (account_id, id);
--bun:split
CREATE TABLE IF NOT EXISTS sessions (
    id         {{.ID}},
    user_id    BIGINT NOT NULL,
    account_id BIGINT NOT NULL,
    token_hash TEXT   NOT NULL UNIQUE,
    created_ms BIGINT NOT NULL,
    seen_ms    BIGINT NOT NULL,
    expires_ms BIGINT NOT NULL,
    revoked_ms BIGINT NOT NULL DEFAULT 0,
    address    TEXT   NOT NULL DEFAULT '',
    agent      TEXT   NOT NULL DEFAULT ''
);
--bun:split
CREATE INDEX IF NOT EXISTS sessions_user ON sessions (user_id, id);
--bun:split
CREATE TABLE IF NOT EXISTS invites (
    id         {{.ID}},
    code_hash  TEXT   NOT NULL UNIQUE,
    hint       TEXT   NOT NULL,
    account_id BIGINT NOT NULL DEFAULT 0,
    role       TEXT   NOT NULL,
    email      TEXT   NOT NULL DEFAULT '',
    created_by TEXT   NOT NULL DEFAULT '',
    created_ms BIGINT NOT NULL,
    expires_ms BIGINT NOT NULL,
    used_ms    BIGINT NOT NULL DEFAULT 0,
    used_by    BIGINT NOT NULL DEFAULT 0,
    revoked_ms BIGINT NOT NULL DEFAULT 0
);
--bun:split
CREATE TABLE IF NOT EXISTS audit (
    id         {{.ID}},
    account_id BIGINT NOT NULL DEFAULT 0,
    actor      TEXT   NOT NULL,
    actor_user BIGINT NOT NULL DEFAULT 0,
    actor_key  BIGINT NOT NULL DEFAULT 0,
    action     TEXT   NOT NULL,
    object     TEXT   NOT NULL DEFAULT '',
    detail     TEXT   NOT NULL DEFAULT '',
    address    TEXT   NOT NULL DEFAULT '',
    created_ms BIGINT NOT NULL
);
--bun:split
CREATE INDEX IF NOT EXISTS audit_account ON audit (account_id, id);
--bun:split
-- The catalog epoch: every change to a bot or a target increments it, so
-- that every node drops the bots and targets it remembers within a second.
INSERT INTO auth_epoch (id, n) VALUES (2, 0) ON CONFLICT (id) DO NOTHING;
