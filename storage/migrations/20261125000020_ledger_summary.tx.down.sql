DROP INDEX IF EXISTS points_ledger_summary;
