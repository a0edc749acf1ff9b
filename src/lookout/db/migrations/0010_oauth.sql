-- OAuth 2.1: Lookout as the authorization server of its MCP resource (issue #29).
-- Every secret (client secret, code, access and refresh token) is stored as SHA-256 only.

-- A client: registered dynamically (RFC 7591), or known by its Client ID Metadata Document
-- (its client_id is the document's URL). Unused ones are swept (see delete_unused_oauth_clients).
CREATE TABLE oauth_clients (
    client_id    text PRIMARY KEY CHECK (length(client_id) BETWEEN 1 AND 2000),
    secret_hash  bytea,
    metadata     jsonb NOT NULL,
    kind         text NOT NULL CHECK (kind IN ('registered', 'metadata_document')),
    created_at   timestamptz NOT NULL DEFAULT now(),
    fetched_at   timestamptz NOT NULL DEFAULT now(),
    last_used_at timestamptz
);
CREATE INDEX oauth_clients_unused_idx ON oauth_clients ((coalesce(last_used_at, created_at)));

-- A connected agent: what one person allowed one client to do in one workspace.
CREATE TABLE oauth_grants (
    id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    client_id    text NOT NULL REFERENCES oauth_clients (client_id) ON DELETE CASCADE,
    workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    user_id      uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    scope        text NOT NULL,
    resource     text NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    last_used_at timestamptz,
    revoked_at   timestamptz
);
-- One live grant per client, workspace and person: authorizing again updates it.
CREATE UNIQUE INDEX oauth_grants_live_idx ON oauth_grants (client_id, workspace_id, user_id)
    WHERE revoked_at IS NULL;
CREATE INDEX oauth_grants_workspace_idx ON oauth_grants (workspace_id, created_at DESC);

CREATE TABLE oauth_codes (
    code_hash      bytea PRIMARY KEY,
    client_id      text NOT NULL REFERENCES oauth_clients (client_id) ON DELETE CASCADE,
    user_id        uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    workspace_id   uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    redirect_uri   text NOT NULL,
    scope          text NOT NULL,
    resource       text NOT NULL,
    code_challenge text NOT NULL,
    created_at     timestamptz NOT NULL DEFAULT now(),
    expires_at     timestamptz NOT NULL,
    used_at        timestamptz,
    grant_id       uuid REFERENCES oauth_grants (id) ON DELETE CASCADE
);
CREATE INDEX oauth_codes_expires_idx ON oauth_codes (expires_at);

-- One issued pair; a refresh rotates it (the old row is revoked, a new one inserted).
CREATE TABLE oauth_tokens (
    id                 uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    grant_id           uuid NOT NULL REFERENCES oauth_grants (id) ON DELETE CASCADE,
    access_hash        bytea NOT NULL UNIQUE,
    refresh_hash       bytea UNIQUE,
    scope              text NOT NULL,
    access_expires_at  timestamptz NOT NULL,
    refresh_expires_at timestamptz,
    created_at         timestamptz NOT NULL DEFAULT now(),
    revoked_at         timestamptz
);
CREATE INDEX oauth_tokens_grant_idx ON oauth_tokens (grant_id);
CREATE INDEX oauth_tokens_expiry_idx ON oauth_tokens ((greatest(access_expires_at, refresh_expires_at)));
