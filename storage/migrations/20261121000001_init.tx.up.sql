-- Herald's schema. Rendered with text/template per dialect: .ID is the
-- auto-increment primary key column type. Times are Unix milliseconds.
CREATE TABLE IF NOT EXISTS accounts (
    id         {{.ID}},
    name       TEXT    NOT NULL,
    status     TEXT    NOT NULL,
    points     BIGINT  NOT NULL DEFAULT 0 CHECK (points >= 0),
    created_ms BIGINT  NOT NULL
);
--bun:split
CREATE TABLE IF NOT EXISTS api_keys (
    id         {{.ID}},
    account_id BIGINT NOT NULL REFERENCES accounts (id),
    prefix     TEXT   NOT NULL,
    hash       TEXT   NOT NULL UNIQUE,
    hint       TEXT   NOT NULL,
    created_ms BIGINT NOT NULL,
    expires_ms BIGINT NOT NULL DEFAULT 0,
    revoked_ms BIGINT NOT NULL DEFAULT 0
);
--bun:split
CREATE INDEX IF NOT EXISTS api_keys_account ON api_keys (account_id);
--bun:split
CREATE TABLE IF NOT EXISTS bots (
    id         {{.ID}},
    account_id BIGINT NOT NULL REFERENCES accounts (id),
    platform   TEXT   NOT NULL,
    name       TEXT   NOT NULL,
    config     TEXT   NOT NULL,
    created_ms BIGINT NOT NULL
);
--bun:split
CREATE INDEX IF NOT EXISTS bots_account ON bots (account_id);
--bun:split
CREATE TABLE IF NOT EXISTS targets (
    id         {{.ID}},
    bot_id     BIGINT NOT NULL REFERENCES bots (id),
    type       TEXT   NOT NULL,
    address    TEXT   NOT NULL,
    name       TEXT   NOT NULL,
    created_ms BIGINT NOT NULL,
    UNIQUE (bot_id, type, address)
);
--bun:split
CREATE TABLE IF NOT EXISTS jobs (
    seq            {{.ID}},
    id             TEXT     NOT NULL UNIQUE,
    account_id     BIGINT   NOT NULL,
    bot_id         BIGINT   NOT NULL,
    target_id      BIGINT   NOT NULL DEFAULT 0,
    platform       TEXT     NOT NULL,
    target_type    TEXT     NOT NULL DEFAULT '',
    msg_type       INTEGER  NOT NULL,
    content        TEXT     NOT NULL DEFAULT '',
    image_url      TEXT     NOT NULL DEFAULT '',
    wakeup         BOOLEAN  NOT NULL DEFAULT FALSE,
    state          TEXT     NOT NULL,
    cost           BIGINT   NOT NULL DEFAULT 0,
    attempts       INTEGER  NOT NULL DEFAULT 0,
    error          TEXT     NOT NULL DEFAULT '',
    platform_index TEXT     NOT NULL DEFAULT '',
    idem_key       TEXT     NOT NULL DEFAULT '',
    created_ms     BIGINT   NOT NULL,
    updated_ms     BIGINT   NOT NULL,
    started_ms     BIGINT   NOT NULL DEFAULT 0,
    finished_ms    BIGINT   NOT NULL DEFAULT 0,
    expires_ms     BIGINT   NOT NULL
);
--bun:split
CREATE INDEX IF NOT EXISTS jobs_state ON jobs (state, expires_ms);
--bun:split
CREATE INDEX IF NOT EXISTS jobs_account ON jobs (account_id, seq);
--bun:split
CREATE TABLE IF NOT EXISTS idempotency (
    account_id  BIGINT NOT NULL,
    idem_key    TEXT   NOT NULL,
    kind        TEXT   NOT NULL,
    fingerprint TEXT   NOT NULL,
    job_ids     TEXT   NOT NULL,
    created_ms  BIGINT NOT NULL,
    PRIMARY KEY (account_id, idem_key)
);
--bun:split
CREATE INDEX IF NOT EXISTS idempotency_created ON idempotency (created_ms);
--bun:split
CREATE TABLE IF NOT EXISTS points_ledger (
    id         {{.ID}},
    account_id BIGINT NOT NULL,
    job_id     TEXT,
    kind       TEXT   NOT NULL,
    amount     BIGINT NOT NULL,
    created_ms BIGINT NOT NULL,
    UNIQUE (job_id, kind)
);
--bun:split
CREATE INDEX IF NOT EXISTS points_ledger_account ON points_ledger (account_id, id);
--bun:split
CREATE TABLE IF NOT EXISTS backlog (
    bot_id BIGINT PRIMARY KEY,
    n      BIGINT NOT NULL DEFAULT 0 CHECK (n >= 0)
);
