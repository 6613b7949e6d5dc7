-- The retention deletes old jobs; their charges and refunds become one
-- summary row per account and month, which concurrent pruners meet on.
CREATE UNIQUE INDEX IF NOT EXISTS points_ledger_summary ON points_ledger (account_id, created_ms) WHERE kind = 'summary';
