-- "Tell me when…": what each run of a watch read and whether its condition was met, and the
-- lookup of a chat's watch whether it is running or paused (automations_thread_idx covers only
-- enabled ones). A watch's condition itself lives in its action (action -> 'condition').

ALTER TABLE automation_runs
    ADD COLUMN condition_met boolean,
    -- The value read: a number, a yes/no, or a short list of new items (bounded by the app).
    ADD COLUMN value jsonb CHECK (value IS NULL OR pg_column_size(value) <= 8192);

CREATE INDEX automations_thread_any_idx ON automations (workspace_id, (action ->> 'thread_id'));
