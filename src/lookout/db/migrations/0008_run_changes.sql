-- What a watch run found, as data (agent.changes.run_data): {changed, modified: [{before,
-- after}], added, removed, moved, counts, sources}. Null for a run that compared nothing (the
-- first look, a skipped or failed run, and every run before this migration). Bounded by the
-- writer: at most 20 lines of each kind per source, 300 characters each.
ALTER TABLE automation_runs ADD COLUMN changes jsonb;
