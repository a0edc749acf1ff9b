-- Issue #27. A watch's history: the page's content at each check, kept economically, and the
-- workspace's own time zone and retention.
--
-- A page's content is stored once per watch per distinct content (sha-256 of the markdown),
-- zlib-compressed (against an earlier version when that is smaller); each check points at the
-- contents it read. A page that did not change
-- between checks costs one small row per check, not a copy (issue #30: <= 200 KB per watch
-- after 50 checks of realistic pages).
CREATE TABLE page_contents (
    automation_id uuid NOT NULL REFERENCES automations (id) ON DELETE CASCADE,
    workspace_id  uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    digest        text NOT NULL CHECK (length(digest) = 64),
    body          bytea NOT NULL CHECK (octet_length(body) <= 262144),
    size          integer NOT NULL CHECK (size >= 0),
    -- The content this one is compressed against (zlib's preset dictionary), or null for a
    -- content compressed on its own. A small edit of a page then costs tens of bytes, not the
    -- page again: 50 checks of a real article edited at every check fit in ~30 KB, not ~300.
    base          text,
    seen_at       timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (automation_id, digest),
    FOREIGN KEY (automation_id, base) REFERENCES page_contents (automation_id, digest)
);

CREATE TABLE run_pages (
    run_id        uuid NOT NULL REFERENCES automation_runs (id) ON DELETE CASCADE,
    automation_id uuid NOT NULL,
    workspace_id  uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    url           text NOT NULL CHECK (length(url) <= 2048),
    title         text NOT NULL DEFAULT '' CHECK (length(title) <= 300),
    digest        text NOT NULL,
    checked_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (run_id, url),
    FOREIGN KEY (automation_id, digest) REFERENCES page_contents (automation_id, digest)
        ON DELETE CASCADE
);
CREATE INDEX run_pages_content_idx ON run_pages (automation_id, digest);
CREATE INDEX run_pages_latest_idx ON run_pages (automation_id, checked_at DESC);

-- What a check cost (the sum of its verb calls' settled credits); null before this migration.
ALTER TABLE automation_runs ADD COLUMN credits integer;
CREATE INDEX automation_runs_history_idx ON automation_runs (automation_id, scheduled_for DESC);

-- Checks older than this were pruned by the retention job: the history says so.
ALTER TABLE automations ADD COLUMN history_pruned_before timestamptz;

ALTER TABLE workspaces
    ADD COLUMN timezone text NOT NULL DEFAULT 'UTC' CHECK (length(timezone) <= 64),
    ADD COLUMN history_retention_days integer NOT NULL DEFAULT 90
        CHECK (history_retention_days BETWEEN 1 AND 3650);
