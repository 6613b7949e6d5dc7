-- One counter that every change able to end a key's validity (a key
-- revoked, an account's status changed) increments in the same
-- transaction: engines that cache authentications compare it before
-- trusting an entry, so such a change takes effect at once in every
-- process.
CREATE TABLE IF NOT EXISTS auth_epoch (
    id BIGINT PRIMARY KEY,
    n  BIGINT NOT NULL DEFAULT 0
);
--bun:split
INSERT INTO auth_epoch (id, n) VALUES (1, 0) ON CONFLICT (id) DO NOTHING;
