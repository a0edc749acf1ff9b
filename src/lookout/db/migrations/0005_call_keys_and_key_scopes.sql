-- Issue #22. A verb call's ledger key is made by the server for that call (it used to be the
-- client's X-Request-Id, so a repeated id ran again for free), and a job is one call: at most one
-- job per ledger key. Jobs that shared a key before this (the exploit) ran free already; their
-- keys are made distinct so the index can exist (the ledger never held more than one of them).
UPDATE jobs SET request_id = request_id || ':' || id
WHERE id IN (
    SELECT id FROM (
        SELECT id, row_number() OVER (PARTITION BY workspace_id, request_id ORDER BY created_at, id) AS n
        FROM jobs
    ) numbered
    WHERE n > 1
);
CREATE UNIQUE INDEX jobs_request_key ON jobs (workspace_id, request_id);

-- An Idempotency-Key belongs to the API key (or user) that sent it, not to the whole workspace:
-- another key of the workspace neither replays nor blocks it. Records older than this have the
-- empty subject and expire within 24 hours.
ALTER TABLE idempotency_keys ADD COLUMN subject text NOT NULL DEFAULT '';
ALTER TABLE idempotency_keys DROP CONSTRAINT idempotency_keys_pkey;
ALTER TABLE idempotency_keys ADD PRIMARY KEY (workspace_id, subject, key);

-- A key made by `lookout admin create-key` or `lookout dev` had no creator; it acts for the
-- workspace's owner (an API key acts with its creator's current rights, and one without a
-- creator stops working). No user is ever deleted by Lookout, so only those keys have none.
UPDATE api_keys k SET created_by = w.owner_id
FROM workspaces w
WHERE w.id = k.workspace_id AND k.created_by IS NULL;
