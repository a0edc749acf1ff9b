-- Sessions end after an idle time (LOOKOUT_SESSION_IDLE_HOURS), so a session remembers when it
-- was last used; sessions that exist now count as used at this migration.
ALTER TABLE sessions ADD COLUMN last_seen_at timestamptz NOT NULL DEFAULT now();

-- LOOKOUT_SIGNUP=invite: a workspace owner invites one email with a role; the invite's token,
-- shown once and stored as SHA-256, lets that email sign up (once, before it expires) and join.
CREATE TABLE invites (
    id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    email        text NOT NULL CHECK (length(email) BETWEEN 3 AND 254),
    role         text NOT NULL CHECK (role IN ('editor', 'viewer')),
    token_hash   bytea NOT NULL UNIQUE,
    created_by   uuid REFERENCES users (id) ON DELETE SET NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    expires_at   timestamptz NOT NULL,
    accepted_at  timestamptz,
    accepted_by  uuid REFERENCES users (id) ON DELETE SET NULL
);
CREATE INDEX invites_workspace_idx ON invites (workspace_id, created_at DESC);

-- A connector's URL may carry a secret (?token=…): it is sealed like the headers, and `url`
-- keeps only what is shown (scheme + host). Rows from before keep their URL in `url` until
-- re-created (url_sealed NULL); they are shown as scheme + host too.
ALTER TABLE mcp_connectors ADD COLUMN url_sealed bytea;
