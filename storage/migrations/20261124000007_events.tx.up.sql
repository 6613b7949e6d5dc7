-- Inbound events: bind codes, the reply context of targets (the latest
-- message or event a reply may answer, and its replies so far), the
-- replies jobs are sent as, the events already handled (by the
-- platform's id, per bot), and the bots' receivers (the lease of the node
-- that runs one, and where it is in the platform's stream). Times are
-- Unix milliseconds.
CREATE TABLE IF NOT EXISTS bind_codes (
    id          {{.ID}},
    bot_id      BIGINT NOT NULL,
    account_id  BIGINT NOT NULL,
    code_hash   TEXT   NOT NULL UNIQUE,
    hint        TEXT   NOT NULL,
    type        TEXT   NOT NULL DEFAULT '',
    uses_left   INTEGER NOT NULL,
    created_by  TEXT   NOT NULL DEFAULT '',
    created_ms  BIGINT NOT NULL,
    expires_ms  BIGINT NOT NULL,
    revoked_ms  BIGINT NOT NULL DEFAULT 0,
    last_target BIGINT NOT NULL DEFAULT 0
);
--bun:split
CREATE INDEX IF NOT EXISTS bind_codes_bot ON bind_codes (bot_id, id);
--bun:split
CREATE TABLE IF NOT EXISTS target_replies (
    target_id  BIGINT PRIMARY KEY,
    msg_id     TEXT   NOT NULL DEFAULT '',
    msg_ms     BIGINT NOT NULL DEFAULT 0,
    msg_seq    INTEGER NOT NULL DEFAULT 0,
    event_id   TEXT   NOT NULL DEFAULT '',
    event_ms   BIGINT NOT NULL DEFAULT 0,
    event_seq  INTEGER NOT NULL DEFAULT 0
);
--bun:split
CREATE TABLE IF NOT EXISTS job_replies (
    job_id    TEXT PRIMARY KEY,
    msg_id    TEXT NOT NULL DEFAULT '',
    event_id  TEXT NOT NULL DEFAULT '',
    seq       INTEGER NOT NULL
);
--bun:split
CREATE TABLE IF NOT EXISTS events_seen (
    bot_id   BIGINT NOT NULL,
    event_id TEXT   NOT NULL,
    seen_ms  BIGINT NOT NULL,
    PRIMARY KEY (bot_id, event_id)
);
--bun:split
CREATE INDEX IF NOT EXISTS events_seen_time ON events_seen (seen_ms);
--bun:split
CREATE TABLE IF NOT EXISTS receivers (
    bot_id     BIGINT PRIMARY KEY,
    holder     TEXT   NOT NULL DEFAULT '',
    lease_ms   BIGINT NOT NULL DEFAULT 0,
    cursor     TEXT   NOT NULL DEFAULT '',
    setup      TEXT   NOT NULL DEFAULT '',
    failures   INTEGER NOT NULL DEFAULT 0,
    error      TEXT   NOT NULL DEFAULT '',
    failed_ms  BIGINT NOT NULL DEFAULT 0,
    event_ms   BIGINT NOT NULL DEFAULT 0
);
--bun:split
CREATE INDEX IF NOT EXISTS targets_address ON targets (bot_id, address);
