-- Atom feeds of what changed (issue #27): one secret-token URL per workspace and per watch,
-- like changedetection.io's RSS. The token is made by the server, shown once, stored as SHA-256,
-- rotated in place (same id, new hash) and revoked by deleting the row.

CREATE TABLE feed_tokens (
    id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    workspace_id  uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    -- NULL: the workspace's feed (every watch); else one watch's feed.
    automation_id uuid REFERENCES automations (id) ON DELETE CASCADE,
    token_hash    bytea NOT NULL UNIQUE,
    prefix        text NOT NULL CHECK (length(prefix) <= 16),
    created_by    uuid REFERENCES users (id) ON DELETE SET NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    rotated_at    timestamptz NOT NULL DEFAULT now(),
    last_used_at  timestamptz
);
-- One feed per scope: the workspace's, and each watch's.
CREATE UNIQUE INDEX feed_tokens_workspace_key ON feed_tokens (workspace_id)
    WHERE automation_id IS NULL;
CREATE UNIQUE INDEX feed_tokens_watch_key ON feed_tokens (automation_id)
    WHERE automation_id IS NOT NULL;

-- A feed lists the newest runs that found a change: read newest first per workspace.
CREATE INDEX automation_runs_changed_idx ON automation_runs (workspace_id, finished_at DESC)
    WHERE (changes ->> 'changed') = 'true';
