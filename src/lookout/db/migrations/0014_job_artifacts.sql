-- Files a job produced (web.scrape's screenshots), served at /v1/jobs/{job}/artifacts/{id} to the
-- job's own workspace only, deleted with their job (jobs expire after LOOKOUT_JOB_TTL_HOURS).
CREATE TABLE IF NOT EXISTS job_artifacts (
    id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    job_id        uuid NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
    workspace_id  uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    content_type  text NOT NULL,
    -- LOOKOUT_BROWSER_SCREENSHOT_MAX_BYTES bounds what is written; this bounds what can be.
    body          bytea NOT NULL CHECK (octet_length(body) <= 20000000),
    created_at    timestamptz NOT NULL DEFAULT now(),
    expires_at    timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS job_artifacts_job_idx ON job_artifacts (job_id);
