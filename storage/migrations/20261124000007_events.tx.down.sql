DROP TABLE IF EXISTS receivers;
--bun:split
DROP TABLE IF EXISTS events_seen;
--bun:split
DROP TABLE IF EXISTS job_replies;
--bun:split
DROP TABLE IF EXISTS target_replies;
--bun:split
DROP TABLE IF EXISTS bind_codes;
