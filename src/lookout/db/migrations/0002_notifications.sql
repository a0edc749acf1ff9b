-- Notifications: where a workspace's watches send "what changed" outside the chat, what was sent,
-- and the recent versions of each watched page (flap suppression).

CREATE TABLE notification_targets (
    id               uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    workspace_id     uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    name             text NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
    kind             text NOT NULL CHECK (kind IN ('apprise', 'webhook')),
    -- What members see: the scheme and host, never the secrets of the URL.
    display          text NOT NULL CHECK (length(display) <= 300),
    url_encrypted    bytea NOT NULL,
    -- The HMAC key of a webhook target (sealed); NULL for Apprise targets.
    signing_encrypted bytea,
    is_default       boolean NOT NULL DEFAULT false,
    created_by       uuid REFERENCES users (id) ON DELETE SET NULL,
    created_at       timestamptz NOT NULL DEFAULT now(),
    UNIQUE (workspace_id, name)
);
-- At most one default target per workspace.
CREATE UNIQUE INDEX notification_targets_default_key
    ON notification_targets (workspace_id) WHERE is_default;

CREATE TABLE notification_deliveries (
    id               uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    workspace_id     uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    automation_id    uuid NOT NULL REFERENCES automations (id) ON DELETE CASCADE,
    run_id           uuid NOT NULL REFERENCES automation_runs (id) ON DELETE CASCADE,
    target_id        uuid REFERENCES notification_targets (id) ON DELETE SET NULL,
    target_name      text NOT NULL DEFAULT '',
    status           text NOT NULL DEFAULT 'queued'
                     CHECK (status IN ('queued', 'sending', 'retrying', 'sent', 'failed',
                                       'suppressed', 'skipped')),
    attempts         integer NOT NULL DEFAULT 0,
    last_error       text,
    -- Why nothing was sent (suppressed / skipped rows, which have no target).
    note             text,
    -- The exact message: every attempt sends the same bytes (and the same signature).
    payload          jsonb NOT NULL DEFAULT '{}',
    next_attempt_at  timestamptz NOT NULL DEFAULT now(),
    lease_until      timestamptz,
    created_at       timestamptz NOT NULL DEFAULT now(),
    finished_at      timestamptz
);
-- A run notifies a target once, however often the run or the hand-over is repeated.
CREATE UNIQUE INDEX notification_deliveries_run_target_key
    ON notification_deliveries (run_id, target_id) WHERE target_id IS NOT NULL;
-- A run records "suppressed" / "skipped" once.
CREATE UNIQUE INDEX notification_deliveries_run_note_key
    ON notification_deliveries (run_id) WHERE target_id IS NULL AND status IN ('suppressed', 'skipped');
CREATE INDEX notification_deliveries_run_idx ON notification_deliveries (run_id);
CREATE INDEX notification_deliveries_pending_idx
    ON notification_deliveries (next_attempt_at) WHERE status IN ('queued', 'sending', 'retrying');

-- The last versions of each page a watch reads (a digest of its meaningful lines), newest last.
CREATE TABLE watch_versions (
    automation_id uuid NOT NULL REFERENCES automations (id) ON DELETE CASCADE,
    url           text NOT NULL,
    seq           bigint GENERATED ALWAYS AS IDENTITY,
    digest        text NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (automation_id, url, seq)
);
