-- The whole data model: accounts, keys, credits, chats, watches (automations), jobs, MCP connectors.
-- Every tenant-owned table carries workspace_id; deleting a workspace deletes what it owns.

CREATE EXTENSION IF NOT EXISTS pgcrypto;

CREATE TABLE users (
    id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    email         text NOT NULL CHECK (length(email) BETWEEN 3 AND 254),
    password_hash text NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX users_email_key ON users (lower(email));

-- The owner pays: credits belong to the workspace, and the owner cannot be deleted while it exists.
CREATE TABLE workspaces (
    id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    name       text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    owner_id   uuid NOT NULL REFERENCES users (id) ON DELETE RESTRICT,
    created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE memberships (
    workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    user_id      uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    role         text NOT NULL CHECK (role IN ('owner', 'editor', 'viewer')),
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (workspace_id, user_id)
);
CREATE INDEX memberships_user_idx ON memberships (user_id);

CREATE TABLE sessions (
    token_hash bytea PRIMARY KEY,
    user_id    uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL
);
CREATE INDEX sessions_user_idx ON sessions (user_id);
CREATE INDEX sessions_expires_idx ON sessions (expires_at);

CREATE TABLE api_keys (
    id                    uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    workspace_id          uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    created_by            uuid REFERENCES users (id) ON DELETE SET NULL,
    name                  text NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
    key_hash              bytea NOT NULL UNIQUE,
    prefix                text NOT NULL,
    scopes                text[] NOT NULL DEFAULT '{}',
    rate_limit_per_minute integer CHECK (rate_limit_per_minute > 0),
    created_at            timestamptz NOT NULL DEFAULT now(),
    last_used_at          timestamptz,
    revoked_at            timestamptz
);
CREATE INDEX api_keys_workspace_idx ON api_keys (workspace_id);
CREATE INDEX api_keys_prefix_idx ON api_keys (prefix) WHERE revoked_at IS NULL;

CREATE TABLE credit_balances (
    workspace_id uuid PRIMARY KEY REFERENCES workspaces (id) ON DELETE CASCADE,
    balance      bigint NOT NULL DEFAULT 0 CONSTRAINT credit_balance_not_negative CHECK (balance >= 0),
    updated_at   timestamptz NOT NULL DEFAULT now()
);

-- Append-only: a reservation is one row, its settlement another; (request_id, kind) makes retries no-ops.
CREATE TABLE credit_ledger (
    id           bigserial PRIMARY KEY,
    workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    request_id   text NOT NULL,
    kind         text NOT NULL CHECK (kind IN ('grant', 'reserve', 'settle', 'refund')),
    amount       bigint NOT NULL,
    verb         text,
    actor        text,
    deadline     timestamptz,
    created_at   timestamptz NOT NULL DEFAULT now(),
    UNIQUE (workspace_id, request_id, kind)
);
CREATE INDEX credit_ledger_workspace_idx ON credit_ledger (workspace_id, created_at DESC);
CREATE INDEX credit_ledger_open_reservations_idx ON credit_ledger (deadline) WHERE kind = 'reserve';
-- A reservation is closed once: by a settle or by a refund, never both.
CREATE UNIQUE INDEX credit_ledger_closed_once_key ON credit_ledger (workspace_id, request_id)
    WHERE kind IN ('settle', 'refund');

CREATE TABLE chats (
    id                uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    workspace_id      uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    created_by        uuid REFERENCES users (id) ON DELETE SET NULL,
    title             text NOT NULL DEFAULT '' CHECK (length(title) <= 200),
    -- The lease: one turn per chat across every process; expires so a crash never wedges a chat.
    ai_responding     boolean NOT NULL DEFAULT false,
    responding_until  timestamptz,
    responding_token  uuid,
    created_at        timestamptz NOT NULL DEFAULT now(),
    updated_at        timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX chats_workspace_idx ON chats (workspace_id, updated_at DESC);

CREATE TABLE chat_messages (
    id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    chat_id      uuid NOT NULL REFERENCES chats (id) ON DELETE CASCADE,
    workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    seq          bigserial NOT NULL,
    role         text NOT NULL CHECK (role IN ('user', 'assistant', 'system')),
    source       text NOT NULL DEFAULT 'user' CHECK (source IN ('user', 'api', 'automation')),
    parts        jsonb NOT NULL DEFAULT '[]',
    run_id       uuid,
    created_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX chat_messages_chat_idx ON chat_messages (chat_id, seq);
-- A redelivered scheduled turn must never write a second assistant answer for the same run.
CREATE UNIQUE INDEX chat_messages_run_role_key ON chat_messages (run_id, role) WHERE run_id IS NOT NULL;

CREATE TABLE automations (
    id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    created_by   uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    trigger      jsonb NOT NULL CHECK (trigger ->> 'type' = 'schedule'),
    action       jsonb NOT NULL CHECK (action ->> 'type' = 'chat_message'),
    enabled      boolean NOT NULL DEFAULT true,
    next_run_at  timestamptz,
    notify       jsonb NOT NULL DEFAULT '{}',
    created_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX automations_due_idx ON automations (next_run_at) WHERE enabled;
CREATE INDEX automations_thread_idx ON automations ((action ->> 'thread_id')) WHERE enabled;
CREATE INDEX automations_workspace_idx ON automations (workspace_id);

CREATE TABLE automation_runs (
    id             uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    automation_id  uuid NOT NULL REFERENCES automations (id) ON DELETE CASCADE,
    workspace_id   uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    scheduled_for  timestamptz NOT NULL,
    manual         boolean NOT NULL DEFAULT false,
    status         text NOT NULL DEFAULT 'queued'
                   CHECK (status IN ('queued', 'running', 'succeeded', 'failed', 'skipped')),
    attempts       integer NOT NULL DEFAULT 0,
    lease_until    timestamptz,
    error          text,
    created_at     timestamptz NOT NULL DEFAULT now(),
    started_at     timestamptz,
    finished_at    timestamptz,
    UNIQUE (automation_id, scheduled_for)
);
CREATE INDEX automation_runs_queued_idx ON automation_runs (created_at) WHERE status IN ('queued', 'running');

CREATE TABLE jobs (
    id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    workspace_id  uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    request_id    text NOT NULL,
    verb          text NOT NULL,
    input         jsonb NOT NULL,
    principal     jsonb NOT NULL,
    door          text NOT NULL,
    status        text NOT NULL DEFAULT 'queued'
                  CHECK (status IN ('queued', 'running', 'succeeded', 'failed', 'cancelled')),
    progress_done  integer NOT NULL DEFAULT 0,
    progress_total integer NOT NULL DEFAULT 0,
    cancel_requested boolean NOT NULL DEFAULT false,
    attempts      integer NOT NULL DEFAULT 0,
    lease_until   timestamptz,
    result        jsonb,
    error         jsonb,
    credits_charged bigint NOT NULL DEFAULT 0,
    created_at    timestamptz NOT NULL DEFAULT now(),
    started_at    timestamptz,
    finished_at   timestamptz,
    expires_at    timestamptz NOT NULL
);
CREATE INDEX jobs_workspace_idx ON jobs (workspace_id, created_at DESC);
CREATE INDEX jobs_active_idx ON jobs (lease_until) WHERE status IN ('queued', 'running');

CREATE TABLE idempotency_keys (
    workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    key          text NOT NULL CHECK (length(key) <= 255),
    fingerprint  text NOT NULL,
    status       integer,
    response     jsonb,
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (workspace_id, key)
);
CREATE INDEX idempotency_keys_created_idx ON idempotency_keys (created_at);

CREATE TABLE mcp_connectors (
    id                uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    workspace_id      uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    name              text NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
    url               text NOT NULL CHECK (length(url) <= 2048),
    headers_encrypted bytea,
    enabled           boolean NOT NULL DEFAULT true,
    created_at        timestamptz NOT NULL DEFAULT now(),
    UNIQUE (workspace_id, name)
);
