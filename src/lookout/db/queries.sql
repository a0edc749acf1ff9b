-- Every runtime statement of Lookout, one per `-- name:` header; loaded once by db/queries.py.

-- name: ping
-- Readiness: the database answers.
SELECT 1;

-- name: migration_try_lock
-- Serialize concurrent `lookout migrate` runs (key = hashtext('lookout-migrate')). A blocking
-- pg_advisory_lock would hold a snapshot while it waits, and the checkpointer's
-- CREATE INDEX CONCURRENTLY in the other process waits for every snapshot: a silent deadlock.
SELECT pg_try_advisory_lock(hashtext('lookout-migrate'));

-- name: migration_unlock
SELECT pg_advisory_unlock(hashtext('lookout-migrate'));

-- name: create_schema_migrations
CREATE TABLE IF NOT EXISTS schema_migrations (
    name       text PRIMARY KEY,
    applied_at timestamptz NOT NULL DEFAULT now()
);

-- name: list_applied_migrations
SELECT name FROM schema_migrations ORDER BY name;

-- name: record_migration
INSERT INTO schema_migrations (name) VALUES ($1);

-- name: insert_user
-- A new user; the unique index on lower(email) refuses a second account for one address.
INSERT INTO users (email, password_hash) VALUES ($1, $2)
RETURNING id, email, password_hash, created_at;

-- name: get_user_by_email
SELECT id, email, password_hash, created_at FROM users WHERE lower(email) = lower($1);

-- name: get_user
SELECT id, email, password_hash, created_at FROM users WHERE id = $1;

-- name: insert_workspace
-- A workspace, its owner's membership and its (empty) balance, in one statement.
WITH ws AS (
    INSERT INTO workspaces (name, owner_id) VALUES ($1, $2)
    RETURNING id, name, owner_id, created_at
), member AS (
    INSERT INTO memberships (workspace_id, user_id, role) SELECT id, owner_id, 'owner' FROM ws
), balance AS (
    INSERT INTO credit_balances (workspace_id) SELECT id FROM ws
)
SELECT id, name, owner_id, created_at FROM ws;

-- name: get_workspace
SELECT id, name, owner_id, created_at FROM workspaces WHERE id = $1;

-- name: add_membership
INSERT INTO memberships (workspace_id, user_id, role) VALUES ($1, $2, $3)
ON CONFLICT (workspace_id, user_id) DO UPDATE SET role = EXCLUDED.role;

-- name: get_membership
SELECT role FROM memberships WHERE workspace_id = $1 AND user_id = $2;

-- name: list_user_workspaces
SELECT w.id, w.name, w.owner_id, w.created_at, m.role, b.balance
FROM memberships m
JOIN workspaces w ON w.id = m.workspace_id
JOIN credit_balances b ON b.workspace_id = w.id
WHERE m.user_id = $1
ORDER BY w.created_at;

-- name: grant_credits
-- Add credits and record the grant; a repeated request id grants nothing more.
WITH entry AS (
    INSERT INTO credit_ledger (workspace_id, request_id, kind, amount, actor)
    VALUES ($1, $2, 'grant', $3, $4)
    ON CONFLICT (workspace_id, request_id, kind) DO NOTHING
    RETURNING amount
)
UPDATE credit_balances SET balance = balance + entry.amount, updated_at = now()
FROM entry WHERE credit_balances.workspace_id = $1
RETURNING balance;

-- name: get_balance
SELECT balance FROM credit_balances WHERE workspace_id = $1;

-- name: insert_api_key
INSERT INTO api_keys (workspace_id, created_by, name, key_hash, prefix, rate_limit_per_minute)
VALUES ($1, $2, $3, $4, $5, $6)
RETURNING id, workspace_id, created_by, name, prefix, scopes, rate_limit_per_minute,
          created_at, last_used_at, revoked_at;

-- name: delete_expired_sessions
DELETE FROM sessions WHERE expires_at < now();

-- name: delete_expired_idempotency_keys
-- Replays are promised for 24 hours.
DELETE FROM idempotency_keys WHERE created_at < now() - interval '24 hours';

-- name: delete_expired_jobs
DELETE FROM jobs WHERE expires_at < now() AND status IN ('succeeded', 'failed', 'cancelled');

-- name: find_keys_by_prefix
-- Unrevoked keys sharing a display prefix; the caller compares hashes in constant time.
SELECT id, workspace_id, rate_limit_per_minute, key_hash
FROM api_keys
WHERE prefix = $1 AND revoked_at IS NULL;

-- name: touch_api_key
UPDATE api_keys SET last_used_at = now() WHERE id = $1;

-- name: list_api_keys
SELECT id, workspace_id, created_by, name, prefix, scopes, rate_limit_per_minute,
       created_at, last_used_at, revoked_at
FROM api_keys WHERE workspace_id = $1 ORDER BY created_at DESC;

-- name: revoke_api_key
UPDATE api_keys SET revoked_at = now()
WHERE id = $1 AND workspace_id = $2 AND revoked_at IS NULL
RETURNING id;

-- name: insert_session
INSERT INTO sessions (token_hash, user_id, expires_at) VALUES ($1, $2, $3);

-- name: get_session_user
SELECT u.id, u.email, u.password_hash, u.created_at
FROM sessions s JOIN users u ON u.id = s.user_id
WHERE s.token_hash = $1 AND s.expires_at > now();

-- name: delete_session
DELETE FROM sessions WHERE token_hash = $1;

-- name: get_first_workspace
SELECT workspace_id FROM memberships WHERE user_id = $1 ORDER BY created_at LIMIT 1;
