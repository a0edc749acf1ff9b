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
INSERT INTO api_keys (workspace_id, created_by, name, key_hash, prefix, rate_limit_per_minute,
                      scopes)
VALUES ($1, $2, $3, $4, $5, $6, $7)
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
-- Unrevoked keys sharing a display prefix; the caller compares hashes in constant time. With
-- each, its creator's role in the workspace now (null: the creator left) and its scopes.
SELECT k.id, k.workspace_id, k.rate_limit_per_minute, k.key_hash, k.created_by, k.scopes,
       m.role AS creator_role
FROM api_keys k
LEFT JOIN memberships m ON m.workspace_id = k.workspace_id AND m.user_id = k.created_by
WHERE k.prefix = $1 AND k.revoked_at IS NULL;

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
-- The user of a session neither expired nor idle for $2 seconds; marks it seen, at most once a
-- minute (a write per request would be one per API call of the page).
WITH found AS (
    SELECT token_hash, user_id, last_seen_at FROM sessions
    WHERE token_hash = $1 AND expires_at > now()
      AND last_seen_at > now() - make_interval(secs => $2)
), touched AS (
    UPDATE sessions s SET last_seen_at = now() FROM found f
    WHERE s.token_hash = f.token_hash AND f.last_seen_at < now() - interval '60 seconds'
)
SELECT u.id, u.email, u.password_hash, u.created_at FROM found f JOIN users u ON u.id = f.user_id;

-- name: delete_session
DELETE FROM sessions WHERE token_hash = $1;

-- name: get_first_workspace
SELECT workspace_id FROM memberships WHERE user_id = $1 ORDER BY created_at LIMIT 1;

-- name: reserve_credits
-- Record the reservation and take the credits in one statement. Not enough credits: the
-- CHECK credit_balance_not_negative aborts the whole statement, ledger row included. A ledger
-- key ($2, made by the server for one call) seen before inserts no ledger row, so nothing is
-- taken twice (no row returned: the caller must not run the call).
-- Its commit does not wait for the WAL flush, as close_reservation's (below). Measured at 16
-- calls at once (reserve with the key check, then settle): Postgres CPU 0.52 -> 0.27 ms a call,
-- wall time 0.44 -> 0.24 ms. What it risks: a crash of Postgres itself or of the machine within
-- ~0.6 s of the commit loses the reservation, and the call it paid for is free; a lost settle
-- already makes a call free (the sweeper refunds its reservation whole). Other sessions see the
-- reservation at once, so nothing is taken twice and the balance CHECK holds as before.
WITH no_flush_wait AS MATERIALIZED (
    SELECT set_config('synchronous_commit', 'off', true)
), entry AS (
    INSERT INTO credit_ledger (workspace_id, request_id, kind, amount, verb, actor, deadline)
    VALUES ($1, $2, 'reserve', -$3::bigint, $4, $5, $6)
    ON CONFLICT DO NOTHING
    RETURNING amount
)
UPDATE credit_balances SET balance = balance + entry.amount, updated_at = now()
FROM entry, no_flush_wait WHERE credit_balances.workspace_id = $1
RETURNING balance;

-- name: reserve_credits_for_key
-- reserve_credits for API key $7, only while it may spend now: not revoked, not read-only, its
-- creator still an editor or owner of the workspace (a key's principal may come from a 30 s
-- cache; this is checked at the source, in the same round trip). No row: nothing reserved.
-- The check costs two primary-key lookups (bench/_reserve_check.py compares the two statements).
-- Committed without waiting for the WAL flush, as reserve_credits.
WITH no_flush_wait AS MATERIALIZED (
    SELECT set_config('synchronous_commit', 'off', true)
), allowed AS (
    SELECT FROM api_keys k
    JOIN memberships m ON m.workspace_id = k.workspace_id AND m.user_id = k.created_by
    WHERE k.id = $7 AND k.workspace_id = $1 AND k.revoked_at IS NULL
      AND m.role IN ('editor', 'owner') AND NOT 'read-only' = ANY (k.scopes)
), entry AS (
    INSERT INTO credit_ledger (workspace_id, request_id, kind, amount, verb, actor, deadline)
    SELECT $1, $2, 'reserve', -$3::bigint, $4, $5, $6 FROM allowed
    ON CONFLICT DO NOTHING
    RETURNING amount
)
UPDATE credit_balances SET balance = balance + entry.amount, updated_at = now()
FROM entry, no_flush_wait WHERE credit_balances.workspace_id = $1
RETURNING balance;

-- name: close_reservation
-- Settle (return what was not used) or refund (return all) a reservation, once: the partial
-- unique index credit_ledger_closed_once_key makes a second close of any kind a no-op. The
-- balance row is only touched when credits come back: a call that used all it reserved (the
-- usual settle) does not lock the workspace's hot balance row a second time.
-- Its commit does not wait for the WAL flush (synchronous_commit off for this statement's own
-- transaction, no extra round trip): the flush is ~0.4 ms of Postgres CPU per call here
-- (bench/door.py). Only a crash of Postgres itself within ~0.6 s (3 x wal_writer_delay) can
-- lose a close, and a lost close leaves the reservation open for the stale-reservation sweeper
-- to refund: the outcome a web process dying before its settle already has. Atomicity, the
-- closed-once index and the balance CHECK are unchanged.
WITH no_flush_wait AS MATERIALIZED (
    SELECT set_config('synchronous_commit', 'off', true)
), reserved AS (
    SELECT -amount AS amount, verb, actor FROM credit_ledger
    WHERE workspace_id = $1 AND request_id = $2 AND kind = 'reserve'
), entry AS (
    INSERT INTO credit_ledger (workspace_id, request_id, kind, amount, verb, actor)
    SELECT $1, $2, $3, reserved.amount - least($4::bigint, reserved.amount), reserved.verb,
           reserved.actor
    FROM reserved
    ON CONFLICT DO NOTHING
    RETURNING amount
), returned AS (
    UPDATE credit_balances SET balance = balance + entry.amount, updated_at = now()
    FROM entry WHERE credit_balances.workspace_id = $1 AND entry.amount <> 0
)
SELECT amount AS returned FROM entry, no_flush_wait;

-- name: write_ledger_together
-- reserve_credits (or reserve_credits_for_key, for a row with API key $7[n]) and
-- close_reservation for several calls of workspace $1 in one statement: the reserves ($2 request
-- ids, $3 amounts, $4 verbs, $5 actors, $6 deadlines, $7 API keys or nulls, in step) and the
-- closes ($8 request ids, $9 kinds, $10 credits charged, in step) asked while one of its ledger
-- writes was in flight (access/credits.py); either side may be empty. One round trip and one
-- commit for all. Rows: ('reserve', request id, the balance after all) for each reservation
-- taken, (kind, request id, credits given back) for each close written. A ledger key seen
-- before, asked twice, or a key that may not spend now takes nothing and has no row; a close
-- of a reservation already closed, or asked twice, writes nothing and has no row. A close's
-- reservation was written before it was asked (its call ran), so it is never one of this
-- statement's own. The balance row is touched once, by what the reserves took and the closes
-- gave back together: when that is not there the CHECK aborts the whole statement, and each is
-- written alone. The flush, the closed-once index and the CHECK as the single statements; each
-- unnest's LIMIT as release_chat_lease's settles. Each reservation a close settles is looked up
-- by its whole key (the LATERAL's LIMIT keeps it a lookup per close): as a join, or by
-- `request_id = ANY`, the generic plan of a ledger never analyzed yet read all of the
-- workspace's reservations (1 ms at 5,000; 0.06 ms a close this way, batches of 4).
WITH no_flush_wait AS MATERIALIZED (
    SELECT set_config('synchronous_commit', 'off', true)
), reserved AS (
    INSERT INTO credit_ledger (workspace_id, request_id, kind, amount, verb, actor, deadline)
    SELECT $1, s.request_id, 'reserve', -s.amount, s.verb, s.actor, s.deadline
    FROM (SELECT * FROM unnest($2::text[], $3::bigint[], $4::text[], $5::text[],
                               $6::timestamptz[], $7::uuid[])
          LIMIT cardinality($2::text[])) AS s(request_id, amount, verb, actor, deadline, key_id)
    WHERE s.key_id IS NULL OR EXISTS (
        SELECT FROM api_keys k
        JOIN memberships m ON m.workspace_id = k.workspace_id AND m.user_id = k.created_by
        WHERE k.id = s.key_id AND k.workspace_id = $1 AND k.revoked_at IS NULL
          AND m.role IN ('editor', 'owner') AND NOT 'read-only' = ANY (k.scopes)
    )
    ON CONFLICT DO NOTHING
    RETURNING request_id, amount
), closed AS (
    INSERT INTO credit_ledger (workspace_id, request_id, kind, amount, verb, actor)
    SELECT $1, s.request_id, s.kind, r.amount - least(s.charged, r.amount), r.verb, r.actor
    FROM (SELECT * FROM unnest($8::text[], $9::text[], $10::bigint[])
          LIMIT cardinality($8::text[])) AS s(request_id, kind, charged)
    CROSS JOIN LATERAL (
        SELECT -amount AS amount, verb, actor FROM credit_ledger
        WHERE workspace_id = $1 AND request_id = s.request_id AND kind = 'reserve'
        LIMIT 1
    ) r
    ON CONFLICT DO NOTHING
    RETURNING request_id, kind, amount
), moved AS (
    UPDATE credit_balances SET balance = balance + sums.amount, updated_at = now()
    FROM (SELECT coalesce((SELECT sum(amount) FROM reserved), 0)
               + coalesce((SELECT sum(amount) FROM closed), 0) AS amount,
                 EXISTS (SELECT FROM reserved) AS taken) sums, no_flush_wait
    WHERE credit_balances.workspace_id = $1 AND (sums.amount <> 0 OR sums.taken)
    RETURNING balance
)
SELECT 'reserve' AS kind, request_id, (SELECT balance FROM moved) AS amount FROM reserved
UNION ALL
SELECT kind, request_id, amount FROM closed;

-- name: get_charge
-- What a closed request cost: reserved minus returned (null while still open).
SELECT (sum(-amount) FILTER (WHERE kind IN ('reserve', 'settle', 'refund')))::bigint AS charged,
       bool_or(kind IN ('settle', 'refund')) AS closed
FROM credit_ledger WHERE workspace_id = $1 AND request_id = $2;

-- name: get_reserved
-- What a call's reservation took (null: none): a job's worker reads its price from the ledger
-- (the web process may have priced it above its base, access/metering.py).
SELECT -amount AS reserved FROM credit_ledger
WHERE workspace_id = $1 AND request_id = $2 AND kind = 'reserve';

-- name: list_stale_reservations
-- Reservations past their deadline that nothing closed (a crashed process), oldest first; at
-- most $1 per pass, deadlines from $2 on (the sweeper's mark: every reservation with an earlier
-- deadline is known closed. Reservations are never deleted: without it, every pass would read
-- every reservation ever made).
SELECT r.workspace_id, r.request_id, r.deadline FROM credit_ledger r
WHERE r.kind = 'reserve' AND r.deadline < now() AND r.deadline >= $2
  AND NOT EXISTS (
      SELECT 1 FROM credit_ledger c
      WHERE c.workspace_id = r.workspace_id AND c.request_id = r.request_id
        AND c.kind IN ('settle', 'refund'))
ORDER BY r.deadline
LIMIT $1;

-- name: recent_ledger
SELECT request_id, kind, amount, verb, created_at FROM credit_ledger
WHERE workspace_id = $1 ORDER BY id DESC LIMIT $2;

-- name: usage_by_verb
-- Credits actually spent per verb: reservations minus what settles and refunds gave back. A
-- top-up (a key with ':topup:', access/metering.py) adds to its call's credits, not its calls.
SELECT verb,
       count(*) FILTER (WHERE kind = 'reserve' AND strpos(request_id, ':topup:') = 0) AS calls,
       (-sum(amount))::bigint AS credits
FROM credit_ledger
WHERE workspace_id = $1 AND verb IS NOT NULL AND created_at > now() - make_interval(days => $2)
GROUP BY verb ORDER BY verb;

-- name: ledger_sum
SELECT coalesce(sum(amount), 0)::bigint FROM credit_ledger WHERE workspace_id = $1;

-- name: insert_job
INSERT INTO jobs (workspace_id, request_id, verb, input, principal, door, progress_total,
                  expires_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, now() + make_interval(hours => $8))
RETURNING *;

-- name: get_job
-- A job of this workspace (another workspace's job is simply not found).
SELECT * FROM jobs WHERE id = $1 AND workspace_id = $2;

-- name: get_job_for_worker
SELECT * FROM jobs WHERE id = $1;

-- name: claim_job
-- queued → running, or take over a running job whose worker's lease ran out (a crash).
UPDATE jobs SET status = 'running', attempts = attempts + 1, started_at = now(),
                lease_until = now() + make_interval(secs => $2)
WHERE id = $1 AND (status = 'queued' OR (status = 'running' AND lease_until < now()))
  AND NOT cancel_requested
RETURNING *;

-- name: job_progress
-- Progress also extends the lease: a job that reports is alive. Concurrent reports (a verb's
-- pages finish together) may commit out of order: progress never goes back.
UPDATE jobs SET progress_done = greatest(progress_done, $2), progress_total = $3,
                lease_until = now() + make_interval(secs => $4)
WHERE id = $1 AND status = 'running'
RETURNING cancel_requested;

-- name: job_cancel_requested
SELECT cancel_requested FROM jobs WHERE id = $1;

-- name: finish_job
-- Only the running attempt may finish a job; a late duplicate finds nothing to update.
UPDATE jobs SET status = $2, result = $3, error = $4, credits_charged = $5,
                finished_at = now(), lease_until = NULL
WHERE id = $1 AND status = 'running'
RETURNING id;

-- name: request_job_cancel
-- A queued job is cancelled at once; a running one is flagged and its worker stops.
UPDATE jobs SET cancel_requested = true,
                status = CASE WHEN status = 'queued' THEN 'cancelled' ELSE status END,
                finished_at = CASE WHEN status = 'queued' THEN now() ELSE finished_at END
WHERE id = $1 AND workspace_id = $2 AND status IN ('queued', 'running')
RETURNING status;

-- name: cancel_flagged_job
-- A claim refused because cancel was requested while the message waited in the queue.
UPDATE jobs SET status = 'cancelled', finished_at = now()
WHERE id = $1 AND status IN ('queued', 'running') AND cancel_requested
RETURNING id;

-- name: list_lost_jobs
-- Running jobs whose lease expired (worker died), and queued jobs never picked up for $1 s.
SELECT id, workspace_id, request_id, attempts, status FROM jobs
WHERE (status = 'running' AND lease_until < now())
   OR (status = 'queued' AND created_at < now() - make_interval(secs => $1))
ORDER BY created_at
LIMIT 200;

-- name: requeue_job
UPDATE jobs SET status = 'queued', lease_until = NULL
WHERE id = $1 AND status = 'running' AND lease_until < now()
RETURNING id;

-- name: fail_lost_job
UPDATE jobs SET status = 'failed', error = $2, finished_at = now(), lease_until = NULL
WHERE id = $1 AND status IN ('queued', 'running')
RETURNING id;

-- name: claim_idempotency_key
-- The first request with this key claims it (or takes over a record older than 24 hours);
-- later ones read what it answered.
INSERT INTO idempotency_keys (workspace_id, key, fingerprint, subject) VALUES ($1, $2, $3, $4)
ON CONFLICT (workspace_id, subject, key) DO UPDATE
    SET fingerprint = EXCLUDED.fingerprint, status = NULL, response = NULL, created_at = now()
    WHERE idempotency_keys.created_at < now() - interval '24 hours'
RETURNING key;

-- name: get_idempotency_key
SELECT fingerprint, status, response, created_at FROM idempotency_keys
WHERE workspace_id = $1 AND key = $2 AND subject = $3
  AND created_at > now() - interval '24 hours';

-- name: store_idempotent_response
UPDATE idempotency_keys SET status = $3, response = $4
WHERE workspace_id = $1 AND key = $2 AND subject = $5;

-- name: release_idempotency_key
DELETE FROM idempotency_keys
WHERE workspace_id = $1 AND key = $2 AND subject = $3 AND status IS NULL;

-- name: extend_job_lease
-- The running attempt's heartbeat: a job that is alive never looks lost to the sweeper.
UPDATE jobs SET lease_until = now() + make_interval(secs => $2)
WHERE id = $1 AND status = 'running'
RETURNING cancel_requested;

-- name: get_api_key
-- One key of a workspace (revoked ones included), never its hash.
SELECT id, workspace_id, created_by, name, prefix, scopes, rate_limit_per_minute,
       created_at, last_used_at, revoked_at
FROM api_keys WHERE id = $1 AND workspace_id = $2;

-- name: insert_mcp_connector
-- A workspace's MCP server; the id comes from the caller because the sealed URL and headers are
-- bound to it. `url` is only what is shown (scheme + host); the whole URL is sealed.
INSERT INTO mcp_connectors (id, workspace_id, name, url, url_sealed, headers_encrypted)
VALUES ($1, $2, $3, $4, $5, $6)
RETURNING id, workspace_id, name, url, url_sealed, headers_encrypted, enabled, created_at;

-- name: list_mcp_connectors
-- A workspace's MCP connectors, oldest first.
SELECT id, workspace_id, name, url, url_sealed, headers_encrypted, enabled, created_at
FROM mcp_connectors WHERE workspace_id = $1 ORDER BY created_at, id;

-- name: get_mcp_connector
-- One connector of a workspace.
SELECT id, workspace_id, name, url, url_sealed, headers_encrypted, enabled, created_at
FROM mcp_connectors WHERE id = $1 AND workspace_id = $2;

-- name: delete_mcp_connector
-- Remove a workspace's connector; no row back when it was not there.
DELETE FROM mcp_connectors WHERE id = $1 AND workspace_id = $2 RETURNING id;

-- name: list_chat_connector_ids
-- The ids of a workspace's connectors marked for chat use (their tools reach the chat agent).
SELECT id FROM mcp_connectors WHERE workspace_id = $1 AND chat_use;

-- name: set_mcp_connector_chat_use
-- Mark a workspace's connector for chat use, or unmark it; no row back when it was not there.
UPDATE mcp_connectors SET chat_use = $3 WHERE id = $1 AND workspace_id = $2 RETURNING chat_use;

-- name: insert_chat
INSERT INTO chats (workspace_id, created_by, title) VALUES ($1, $2, $3)
RETURNING id, workspace_id, created_by, title, created_at, updated_at;

-- name: get_chat
-- A chat of this workspace (another workspace's chat is simply not found).
SELECT id, workspace_id, created_by, title, created_at, updated_at
FROM chats WHERE id = $1 AND workspace_id = $2;

-- name: list_chats
SELECT id, workspace_id, created_by, title, created_at, updated_at
FROM chats WHERE workspace_id = $1 ORDER BY updated_at DESC, id LIMIT $2 OFFSET $3;

-- name: rename_chat
UPDATE chats SET title = $3, updated_at = now() WHERE id = $1 AND workspace_id = $2
RETURNING id, workspace_id, created_by, title, created_at, updated_at;

-- name: delete_chat
-- Messages go with the chat (ON DELETE CASCADE); its watches are deleted with it.
WITH watches AS (
    DELETE FROM automations WHERE workspace_id = $2 AND action ->> 'thread_id' = $1::uuid::text
)
DELETE FROM chats WHERE id = $1 AND workspace_id = $2 RETURNING id;

-- name: acquire_chat_lease
-- One turn per chat across every process: compare-and-set, and a lease that outlived its
-- process (responding_until in the past) can be taken over. With the turn's opening message
-- ($4.. are insert_chat_message's id, role, source, parts, run_id; $4 null: none) in the same
-- statement: no message without the lease.
WITH leased AS (
    UPDATE chats SET ai_responding = true, responding_token = $2,
                     responding_until = now() + make_interval(secs => $3)
    WHERE id = $1 AND (NOT ai_responding OR responding_until < now())
    RETURNING id, workspace_id
), message AS (
    INSERT INTO chat_messages (id, chat_id, workspace_id, role, source, parts, run_id)
    SELECT $4, leased.id, leased.workspace_id, $5, $6, $7, $8 FROM leased
    WHERE $4::uuid IS NOT NULL
    ON CONFLICT DO NOTHING
)
SELECT id FROM leased;

-- name: renew_chat_lease
UPDATE chats SET responding_until = now() + make_interval(secs => $3)
WHERE id = $1 AND responding_token = $2
RETURNING id;

-- name: release_chat_lease
-- Only the holder releases: a turn whose lease was taken over must not free the new holder's.
-- With the end of the turn in the same statement ($3 null: none): its closing message, the
-- settles of its verb calls
-- (as close_reservation; $8..$10: workspace ids, request ids, credits charged), the end of its
-- watch run when known ($11 status, $12 error; run $7, as finish_run), the turn's LangGraph
-- checkpoint ($13..$22 as put_checkpoint's $1..$10; $13 null: none) and release_chat_lease.
-- All but the release are written even when the lease was taken over (nothing the turn did is
-- lost); retried, nothing is written twice (same message id, one close per request, a run
-- finishes once, a checkpoint id is one row). The answer and the state the next turn reads are
-- stored together or not at all. The settles' LIMIT (their count: a no-op) is for the planner:
-- it guesses 10 elements for unnest of a parameter, which made the generic plan look 3x costlier
-- than one planned for the call's values, so Postgres planned this statement on every call
-- (0.4 ms, as long as running it; tests/integration/test_query_plans.py).
WITH message AS (
    INSERT INTO chat_messages (id, chat_id, workspace_id, role, source, parts, run_id)
    SELECT $3, c.id, c.workspace_id, $4, $5, $6, $7 FROM chats c
    WHERE c.id = $1 AND $3::uuid IS NOT NULL
    ON CONFLICT DO NOTHING
), settled AS (
    INSERT INTO credit_ledger (workspace_id, request_id, kind, amount, verb, actor)
    SELECT r.workspace_id, r.request_id, 'settle', -r.amount - least(s.charged, -r.amount),
           r.verb, r.actor
    FROM (SELECT * FROM unnest($8::uuid[], $9::text[], $10::bigint[])
          LIMIT cardinality($9::text[])) AS s(workspace_id, request_id, charged)
    JOIN credit_ledger r ON r.workspace_id = s.workspace_id AND r.request_id = s.request_id
                        AND r.kind = 'reserve'
    ON CONFLICT DO NOTHING
    RETURNING workspace_id, amount
), returned AS (
    UPDATE credit_balances SET balance = balance + back.amount, updated_at = now()
    FROM (SELECT workspace_id, sum(amount) AS amount FROM settled GROUP BY workspace_id) back
    WHERE credit_balances.workspace_id = back.workspace_id AND back.amount <> 0
), finished AS (
    -- $23: what the run found (null: nothing compared), kept whether or not it ends here.
    UPDATE automation_runs
    SET changes = coalesce($23::jsonb, changes),
        status = coalesce($11::text, status),
        error = CASE WHEN $11::text IS NULL THEN error ELSE $12 END,
        finished_at = CASE WHEN $11::text IS NULL THEN finished_at ELSE now() END,
        lease_until = CASE WHEN $11::text IS NULL THEN lease_until END
    WHERE id = $7 AND ($11::text IS NOT NULL OR $23::jsonb IS NOT NULL) AND status = 'running'
), blobs AS (
    INSERT INTO checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob)
    SELECT $13, $14, b.channel, b.version, b.type, b.blob
    FROM unnest($19::text[], $20::text[], $21::text[], $22::bytea[])
         AS b(channel, version, type, blob)
    WHERE $13::text IS NOT NULL
    ON CONFLICT (thread_id, checkpoint_ns, channel, version) DO NOTHING
), saved AS (
    INSERT INTO checkpoints
        (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata)
    SELECT $13, $14, $15, $16, $17, $18 WHERE $13::text IS NOT NULL
    ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id)
    DO UPDATE SET checkpoint = EXCLUDED.checkpoint, metadata = EXCLUDED.metadata
), released AS (
    UPDATE chats SET ai_responding = false, responding_token = NULL, responding_until = NULL,
                     updated_at = now()
    WHERE id = $1 AND responding_token = $2
    RETURNING id
)
SELECT id FROM released;

-- name: get_chat_lease
SELECT ai_responding AND responding_until > now() AS busy, responding_until
FROM chats WHERE id = $1;

-- name: insert_chat_message
-- A redelivered scheduled turn finds its (run_id, role) already written: nothing is added.
INSERT INTO chat_messages (id, chat_id, workspace_id, role, source, parts, run_id)
VALUES ($1, $2, $3, $4, $5, $6, $7)
ON CONFLICT DO NOTHING
RETURNING id, chat_id, seq, role, source, parts, run_id, created_at;

-- name: list_chat_messages
-- A page of a chat's messages, oldest first, after the cursor (seq).
SELECT id, chat_id, seq, role, source, parts, run_id, created_at
FROM chat_messages
WHERE chat_id = $1 AND workspace_id = $2 AND seq > $3
ORDER BY seq LIMIT $4;

-- name: count_watches
SELECT count(*) FROM automations WHERE workspace_id = $1 AND enabled;

-- name: delete_thread_automations
-- One watch per chat: a new one replaces whatever targeted the chat before.
DELETE FROM automations WHERE workspace_id = $1 AND action ->> 'thread_id' = $2::text;

-- name: insert_automation
INSERT INTO automations (workspace_id, created_by, trigger, action, next_run_at, notify)
VALUES ($1, $2, $3, $4, $5, $6)
RETURNING id, workspace_id, created_by, trigger, action, enabled, next_run_at, notify,
          created_at, updated_at;

-- name: find_thread_automation
-- The enabled watch of a chat, through automations_thread_idx (no scan).
SELECT id, workspace_id, created_by, trigger, action, enabled, next_run_at, notify,
       created_at, updated_at
FROM automations
WHERE workspace_id = $1 AND action ->> 'thread_id' = $2::text AND enabled;

-- name: get_automation
SELECT id, workspace_id, created_by, trigger, action, enabled, next_run_at, notify,
       created_at, updated_at
FROM automations WHERE id = $1 AND workspace_id = $2;

-- name: delete_automation
DELETE FROM automations WHERE id = $1 AND workspace_id = $2 RETURNING id;

-- name: disable_automation
UPDATE automations SET enabled = false, updated_at = now() WHERE id = $1;

-- name: list_watches
-- The workspace's watches with their last run, newest first.
SELECT a.id, a.workspace_id, a.created_by, a.trigger, a.action, a.enabled, a.next_run_at,
       a.notify, a.created_at, a.updated_at,
       r.status AS last_status, r.scheduled_for AS last_scheduled_for,
       r.condition_met AS last_condition_met, r.value AS last_value
FROM automations a
LEFT JOIN LATERAL (
    SELECT status, scheduled_for, condition_met, value FROM automation_runs
    WHERE automation_id = a.id ORDER BY scheduled_for DESC LIMIT 1
) r ON true
WHERE a.workspace_id = $1
ORDER BY a.created_at DESC
LIMIT $2;

-- name: watches_for_threads
SELECT id, workspace_id, created_by, trigger, action, enabled, next_run_at, notify,
       created_at, updated_at
FROM automations
WHERE workspace_id = $1 AND enabled AND action ->> 'thread_id' = ANY($2::text[]);

-- name: insert_run
-- A fire of an automation; a second insert for the same fire is a no-op (None).
INSERT INTO automation_runs (automation_id, workspace_id, scheduled_for, manual)
VALUES ($1, $2, $3, $4)
ON CONFLICT (automation_id, scheduled_for) DO NOTHING
RETURNING id;

-- name: list_runs
SELECT id, automation_id, scheduled_for, manual, status, attempts, error, created_at,
       started_at, finished_at, changes, condition_met, value
FROM automation_runs
WHERE automation_id = $1 AND workspace_id = $2
ORDER BY scheduled_for DESC LIMIT $3;

-- name: get_run
-- One run of a watch, by id, in the caller's workspace.
SELECT id, automation_id, scheduled_for, manual, status, attempts, error, created_at,
       started_at, finished_at, changes, condition_met, value
FROM automation_runs
WHERE id = $1 AND automation_id = $2 AND workspace_id = $3;

-- name: claim_due_automations
-- Due watches, locked so a second dispatcher skips them; at most $1 per batch.
SELECT id, workspace_id, trigger, next_run_at FROM automations
WHERE enabled AND next_run_at <= now()
ORDER BY next_run_at
LIMIT $1
FOR UPDATE SKIP LOCKED;

-- name: insert_runs_batch
-- One run per claimed fire; (automation, scheduled_for) is unique, so a repeat inserts nothing.
INSERT INTO automation_runs (automation_id, workspace_id, scheduled_for)
SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::timestamptz[])
ON CONFLICT (automation_id, scheduled_for) DO NOTHING
RETURNING id;

-- name: advance_automations
UPDATE automations a SET next_run_at = u.next_run_at
FROM unnest($1::uuid[], $2::timestamptz[]) AS u(id, next_run_at)
WHERE a.id = u.id;

-- name: claim_run
-- queued → running, once: a duplicate delivery of the message finds nothing to claim. In the
-- same round trip, what the worker reads next: the watch, its chat (in the watch's workspace)
-- and its creator's role there, NULL where one is gone. And when the watch is enabled, its chat
-- there and its creator may spend (editor, owner: runner._creator), the turn begins: the chat's
-- lease taken as acquire_chat_lease takes it ($3 token, $4 seconds) and the watch's message
-- stored as the turn's question ($5 its id, parts as turns.begin makes them). chat_leased says
-- whether it did: false when the chat is answering another message, or when its row changed
-- after this statement's snapshot (a turn that just ended: then begin the turn on its own, so
-- the checkpoint read here is never older than the lease). With the lease, the thread's latest
-- LangGraph checkpoint (cp_*: latest_checkpoint's columns; cp_checkpoint_id null: none yet).
WITH run AS (
    UPDATE automation_runs SET status = 'running', attempts = attempts + 1, started_at = now(),
                               lease_until = now() + make_interval(secs => $2)
    WHERE id = $1 AND status = 'queued'
    RETURNING id, automation_id, workspace_id, scheduled_for, manual, attempts
), claimed AS (
    SELECT run.id, run.automation_id, run.workspace_id, run.scheduled_for, run.manual,
           run.attempts,
           a.id AS a_id, a.workspace_id AS a_workspace_id, a.created_by AS a_created_by,
           a.trigger AS a_trigger, a.action AS a_action, a.enabled AS a_enabled,
           a.next_run_at AS a_next_run_at, a.notify AS a_notify, a.created_at AS a_created_at,
           a.updated_at AS a_updated_at,
           c.id AS c_id, c.workspace_id AS c_workspace_id, c.created_by AS c_created_by,
           c.title AS c_title, c.created_at AS c_created_at, c.updated_at AS c_updated_at,
           m.role AS creator_role
    FROM run
    LEFT JOIN automations a ON a.id = run.automation_id
    LEFT JOIN chats c ON c.id = (a.action ->> 'thread_id')::uuid
                     AND c.workspace_id = a.workspace_id
    LEFT JOIN memberships m ON m.workspace_id = a.workspace_id AND m.user_id = a.created_by
), leased AS (
    UPDATE chats SET ai_responding = true, responding_token = $3,
                     responding_until = now() + make_interval(secs => $4)
    FROM claimed
    WHERE chats.id = claimed.c_id AND claimed.a_enabled
      AND claimed.creator_role IN ('editor', 'owner')
      AND (NOT chats.ai_responding OR chats.responding_until < now())
      AND chats.updated_at = claimed.c_updated_at
    RETURNING chats.id, chats.workspace_id
), latest AS (
    -- include: checkpoint_read
    WHERE thread_id = (SELECT id::text FROM leased) AND checkpoint_ns = ''
    ORDER BY checkpoint_id DESC LIMIT 1
), question AS (
    INSERT INTO chat_messages (id, chat_id, workspace_id, role, source, parts, run_id)
    SELECT $5, leased.id, leased.workspace_id, 'user', 'automation',
           jsonb_build_array(jsonb_build_object(
               'type', 'text', 'text', claimed.a_action ->> 'message')),
           claimed.id
    FROM leased, claimed
    ON CONFLICT DO NOTHING
)
SELECT claimed.*, EXISTS (SELECT 1 FROM leased) AS chat_leased,
       latest.thread_id AS cp_thread_id, latest.checkpoint AS cp_checkpoint,
       latest.checkpoint_ns AS cp_checkpoint_ns, latest.checkpoint_id AS cp_checkpoint_id,
       latest.parent_checkpoint_id AS cp_parent_checkpoint_id, latest.metadata AS cp_metadata,
       latest.channel_values AS cp_channel_values, latest.pending_writes AS cp_pending_writes
FROM claimed LEFT JOIN latest ON true;

-- name: finish_run
UPDATE automation_runs SET status = $2, error = $3, finished_at = now(), lease_until = NULL
WHERE id = $1 AND status = 'running';

-- name: run_is_running
SELECT status = 'running' FROM automation_runs WHERE id = $1;

-- name: requeue_run
UPDATE automation_runs SET status = 'queued', lease_until = NULL
WHERE id = $1 AND status = 'running';

-- name: list_stuck_runs
-- Runs queued for over a minute (an enqueue was lost) and running runs whose worker died.
SELECT id, status, attempts, created_at FROM automation_runs
WHERE (status = 'queued' AND created_at < now() - interval '1 minute')
   OR (status = 'running' AND lease_until < now())
ORDER BY created_at
LIMIT 1000;

-- name: fail_stuck_run
UPDATE automation_runs SET status = 'failed', error = $2, finished_at = now(), lease_until = NULL
WHERE id = $1 AND status = 'running' AND lease_until < now();

-- name: renew_run_lease
UPDATE automation_runs SET lease_until = now() + make_interval(secs => $2)
WHERE id = $1 AND status = 'running';

-- name: expire_queued_run
UPDATE automation_runs SET status = 'failed', finished_at = now(),
       error = 'This check waited too long to run (the workers were down) and was dropped.'
WHERE id = $1 AND status = 'queued';

-- name: get_key_acting_user
-- Whom an API key acts as when something must belong to a person (a watch's creator):
-- the user who made the key, else the workspace owner.
SELECT coalesce(k.created_by, w.owner_id)
FROM api_keys k JOIN workspaces w ON w.id = k.workspace_id
WHERE k.id = $1;

-- name: count_notification_targets
SELECT count(*) FROM notification_targets WHERE workspace_id = $1;

-- name: clear_default_notification_target
UPDATE notification_targets SET is_default = false WHERE workspace_id = $1 AND is_default;

-- name: insert_notification_target
INSERT INTO notification_targets (id, workspace_id, name, kind, display, url_encrypted,
                                  signing_encrypted, is_default, created_by)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
RETURNING id, workspace_id, name, kind, display, url_encrypted, signing_encrypted, is_default,
          created_at;

-- name: list_notification_targets
SELECT id, workspace_id, name, kind, display, url_encrypted, signing_encrypted, is_default,
       created_at
FROM notification_targets WHERE workspace_id = $1 ORDER BY created_at;

-- name: get_notification_target
SELECT id, workspace_id, name, kind, display, url_encrypted, signing_encrypted, is_default,
       created_at
FROM notification_targets WHERE id = $1 AND workspace_id = $2;

-- name: delete_notification_target
DELETE FROM notification_targets WHERE id = $1 AND workspace_id = $2 RETURNING id;

-- name: notification_targets_for_watch
-- The chosen targets of a watch, or the workspace's default when it chose none (NULL).
SELECT id, workspace_id, name, kind, display, url_encrypted, signing_encrypted, is_default,
       created_at
FROM notification_targets
WHERE workspace_id = $1 AND (CASE WHEN $2::uuid[] IS NULL THEN is_default ELSE id = ANY($2) END)
ORDER BY created_at;

-- name: update_automation_notify
UPDATE automations SET notify = $3, updated_at = now()
WHERE id = $1 AND workspace_id = $2
RETURNING id, workspace_id, created_by, trigger, action, enabled, next_run_at, notify,
          created_at, updated_at;

-- name: insert_delivery
-- One delivery per run and target: a repeated hand-over inserts nothing (None).
INSERT INTO notification_deliveries (workspace_id, automation_id, run_id, target_id, target_name,
                                     payload)
VALUES ($1, $2, $3, $4, $5, $6)
ON CONFLICT (run_id, target_id) WHERE target_id IS NOT NULL DO NOTHING
RETURNING id;

-- name: insert_delivery_note
-- A run whose change was not sent (suppressed, or no target), recorded once.
INSERT INTO notification_deliveries (workspace_id, automation_id, run_id, status, note,
                                     finished_at)
VALUES ($1, $2, $3, $4, $5, now())
ON CONFLICT (run_id) WHERE target_id IS NULL AND status IN ('suppressed', 'skipped') DO NOTHING;

-- name: claim_delivery
-- queued/retrying (when due) → sending, once; a sending row whose worker died is taken over.
UPDATE notification_deliveries d
SET status = 'sending', attempts = attempts + 1, lease_until = now() + make_interval(secs => $2)
WHERE d.id = $1
  AND ((d.status IN ('queued', 'retrying') AND d.next_attempt_at <= now())
       OR (d.status = 'sending' AND d.lease_until < now()))
RETURNING d.id, d.workspace_id, d.automation_id, d.run_id, d.target_id, d.target_name, d.status,
          d.attempts, d.last_error, d.note, d.payload, d.created_at, d.finished_at;

-- name: finish_delivery
UPDATE notification_deliveries
SET status = $2, last_error = $3, finished_at = now(), lease_until = NULL
WHERE id = $1 AND status = 'sending';

-- name: retry_delivery
UPDATE notification_deliveries
SET status = 'retrying', last_error = $2, lease_until = NULL,
    next_attempt_at = now() + make_interval(secs => $3)
WHERE id = $1 AND status = 'sending';

-- name: list_lost_deliveries
-- Deliveries whose message was lost: due for over a minute, or sending past their lease.
SELECT id FROM notification_deliveries
WHERE (status IN ('queued', 'retrying') AND next_attempt_at < now() - interval '1 minute')
   OR (status = 'sending' AND lease_until < now())
ORDER BY next_attempt_at
LIMIT 1000;

-- name: list_run_deliveries
SELECT id, workspace_id, automation_id, run_id, target_id, target_name, status, attempts,
       last_error, note, created_at, finished_at
FROM notification_deliveries
WHERE run_id = ANY($1::uuid[]) AND workspace_id = $2
ORDER BY created_at;

-- name: list_watch_versions
-- The digests of a page's last versions, newest first.
SELECT digest FROM watch_versions
WHERE automation_id = $1 AND url = $2
ORDER BY seq DESC LIMIT $3;

-- name: insert_watch_version
INSERT INTO watch_versions (automation_id, url, digest) VALUES ($1, $2, $3);

-- name: prune_watch_versions
-- Keep the newest $3 versions of a page (compared_versions is capped below that).
DELETE FROM watch_versions
WHERE automation_id = $1 AND url = $2
  AND seq < coalesce((SELECT seq FROM watch_versions WHERE automation_id = $1 AND url = $2
                      ORDER BY seq DESC OFFSET $3 - 1 LIMIT 1), 0);

-- name: status_watches
-- Enabled watches due now, those due more than $1 s ago, and how late the oldest is (seconds).
SELECT count(*) AS due,
       count(*) FILTER (WHERE next_run_at < now() - make_interval(secs => $1)) AS overdue,
       extract(epoch FROM now() - min(next_run_at))::float8 AS oldest_due_s
FROM automations WHERE enabled AND next_run_at <= now();

-- name: status_runs_last_hour
-- Watch runs created in the last hour, by status.
SELECT status, count(*) AS count FROM automation_runs
WHERE created_at > now() - interval '1 hour'
GROUP BY status;

-- name: status_stuck_runs
-- Running runs whose lease ran out (their worker stopped renewing it), most overdue first.
SELECT id, automation_id, workspace_id, attempts, started_at, lease_until,
       extract(epoch FROM now() - lease_until)::float8 AS past_lease_s
FROM automation_runs
WHERE status = 'running' AND lease_until < now()
ORDER BY lease_until LIMIT $1;

-- name: status_jobs
-- Jobs queued or running now, and jobs that finished in the last hour, by status.
SELECT status, count(*) AS count FROM jobs
WHERE status IN ('queued', 'running') OR finished_at > now() - interval '1 hour'
GROUP BY status;

-- name: release_job
-- A running job cut off by a worker shutdown goes back to the queue at once (no lease wait).
UPDATE jobs SET status = 'queued', lease_until = NULL
WHERE id = $1 AND status = 'running'
RETURNING id;

-- name: hand_job_to_chat
-- The chat turn stops waiting: the worker will post the result. Nothing when already finished
-- (then the turn reads the result itself), so the result is shown exactly once.
UPDATE jobs SET post_to_chat = true
WHERE id = $1 AND status IN ('queued', 'running')
RETURNING id;

-- name: set_job_chat
UPDATE jobs SET chat_id = $2 WHERE id = $1;

-- name: claim_job_post
-- Take the duty to post a finished job's result to its chat, once (a redelivery finds none).
UPDATE jobs SET post_to_chat = false
WHERE id = $1 AND post_to_chat AND chat_id IS NOT NULL
  AND status IN ('succeeded', 'failed', 'cancelled')
RETURNING *;

-- part: checkpoint_read
-- A thread's checkpoint rows with their channel values and pending writes, as LangGraph's
-- AsyncPostgresSaver.SELECT_SQL reads them; latest_checkpoint and claim_run's `latest` add the
-- thread and take the newest (one copy of the read: both stay equal to the library's answer).
SELECT thread_id, checkpoint, checkpoint_ns, checkpoint_id, parent_checkpoint_id, metadata,
    (
        SELECT array_agg(array[bl.channel::bytea, bl.type::bytea, bl.blob])
        FROM jsonb_each_text(checkpoint -> 'channel_versions')
        JOIN checkpoint_blobs bl
            ON bl.thread_id = checkpoints.thread_id
            AND bl.checkpoint_ns = checkpoints.checkpoint_ns
            AND bl.channel = jsonb_each_text.key
            AND bl.version = jsonb_each_text.value
    ) AS channel_values,
    (
        SELECT array_agg(array[cw.task_id::text::bytea, cw.channel::bytea, cw.type::bytea,
                               cw.blob, convert_to(cw.task_path, 'UTF8'), cw.idx::text::bytea])
        FROM checkpoint_writes cw
        WHERE cw.thread_id = checkpoints.thread_id
            AND cw.checkpoint_ns = checkpoints.checkpoint_ns
            AND cw.checkpoint_id = checkpoints.checkpoint_id
    ) AS pending_writes
FROM checkpoints

-- name: latest_checkpoint
-- LangGraph's checkpointer read of a thread's latest checkpoint (AsyncPostgresSaver.SELECT_SQL
-- + its WHERE), through our pool: the library's own read through psycopg was ~12 % of a worker's
-- CPU. tests/integration/test_checkpointer_saver.py holds it equal to the library's answer;
-- claim_run reads the same (its `latest`), checked the same way.
-- include: checkpoint_read
WHERE thread_id = $1 AND checkpoint_ns = $2
ORDER BY checkpoint_id DESC LIMIT 1;

-- name: put_checkpoint
-- LangGraph's checkpointer write (UPSERT_CHECKPOINT_BLOBS_SQL for each changed channel, then
-- UPSERT_CHECKPOINTS_SQL) as one statement: the library pipelines three through psycopg.
-- $5 checkpoint, $6 metadata; $7..$10 the blobs' channels, versions, types and bytes.
WITH blobs AS (
    INSERT INTO checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob)
    SELECT $1, $2, b.channel, b.version, b.type, b.blob
    FROM unnest($7::text[], $8::text[], $9::text[], $10::bytea[]) AS b(channel, version, type, blob)
    ON CONFLICT (thread_id, checkpoint_ns, channel, version) DO NOTHING
)
INSERT INTO checkpoints
    (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata)
VALUES ($1, $2, $3, $4, $5, $6)
ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id)
DO UPDATE SET checkpoint = EXCLUDED.checkpoint, metadata = EXCLUDED.metadata;

-- name: get_key_standing
-- Why an API key may not spend now (after reserve_credits refused it): revoked (no row or
-- revoked_at), its creator's role in the workspace (null: left) and its scopes.
SELECT k.revoked_at, k.scopes, m.role AS creator_role
FROM api_keys k
LEFT JOIN memberships m ON m.workspace_id = k.workspace_id AND m.user_id = k.created_by
WHERE k.id = $1 AND k.workspace_id = $2;

-- name: delete_user_sessions
-- "Sign out everywhere": every session of the user; the count back.
WITH gone AS (DELETE FROM sessions WHERE user_id = $1 RETURNING 1) SELECT count(*) FROM gone;

-- name: insert_invite
INSERT INTO invites (workspace_id, email, role, token_hash, created_by, expires_at)
VALUES ($1, $2, $3, $4, $5, $6)
RETURNING id, workspace_id, email, role, created_by, created_at, expires_at, accepted_at;

-- name: list_open_invites
-- A workspace's invites not yet taken and not expired, newest first.
SELECT id, workspace_id, email, role, created_by, created_at, expires_at, accepted_at
FROM invites
WHERE workspace_id = $1 AND accepted_at IS NULL AND expires_at > now()
ORDER BY created_at DESC
LIMIT 200;

-- name: delete_invite
DELETE FROM invites WHERE id = $1 AND workspace_id = $2 RETURNING id;

-- name: count_open_invites
SELECT count(*) FROM invites WHERE workspace_id = $1 AND accepted_at IS NULL AND expires_at > now();

-- name: accept_invite
-- Take an invite for the user just created: only once, before it expires, for its own email.
UPDATE invites SET accepted_at = now(), accepted_by = $3
WHERE token_hash = $1 AND lower(email) = lower($2) AND accepted_at IS NULL AND expires_at > now()
RETURNING workspace_id, role;


-- name: find_thread_watch
-- The watch of a chat, running or paused (automations_thread_any_idx), newest first.
SELECT a.id, a.workspace_id, a.created_by, a.trigger, a.action, a.enabled, a.next_run_at,
       a.notify, a.created_at, a.updated_at,
       r.status AS last_status, r.scheduled_for AS last_scheduled_for,
       r.condition_met AS last_condition_met, r.value AS last_value
FROM automations a
LEFT JOIN LATERAL (
    SELECT status, scheduled_for, condition_met, value FROM automation_runs
    WHERE automation_id = a.id ORDER BY scheduled_for DESC LIMIT 1
) r ON true
WHERE a.workspace_id = $1 AND a.action ->> 'thread_id' = $2::text
ORDER BY a.enabled DESC, a.created_at DESC
LIMIT 1;

-- name: set_automation_enabled
-- Pause (false) or resume (true) a watch in place; resuming sets its next fire ($4).
UPDATE automations SET enabled = $3, next_run_at = coalesce($4, next_run_at), updated_at = now()
WHERE id = $1 AND workspace_id = $2
RETURNING id, workspace_id, created_by, trigger, action, enabled, next_run_at, notify,
          created_at, updated_at;

-- name: update_automation_watch
-- Edit a watch in place (its question, cadence, timezone, condition): its id, runs, versions
-- and deliveries stay.
UPDATE automations SET trigger = $3, action = $4, next_run_at = $5, notify = $6, updated_at = now()
WHERE id = $1 AND workspace_id = $2
RETURNING id, workspace_id, created_by, trigger, action, enabled, next_run_at, notify,
          created_at, updated_at;

-- name: set_run_condition
-- What a run read, whether the watch's condition was met and whether it became so ($4, the
-- verdict that notifies; a feed lists that run).
UPDATE automation_runs SET condition_met = $2, value = $3, condition_became_met = $4
WHERE id = $1;

-- name: watches_for_threads_any
-- The watch of each listed chat, running or paused (automations_thread_any_idx), with its last run.
SELECT DISTINCT ON (a.action ->> 'thread_id')
       a.id, a.workspace_id, a.created_by, a.trigger, a.action, a.enabled, a.next_run_at,
       a.notify, a.created_at, a.updated_at,
       r.status AS last_status, r.scheduled_for AS last_scheduled_for,
       r.condition_met AS last_condition_met, r.value AS last_value
FROM automations a
LEFT JOIN LATERAL (
    SELECT status, scheduled_for, condition_met, value FROM automation_runs
    WHERE automation_id = a.id ORDER BY scheduled_for DESC LIMIT 1
) r ON true
WHERE a.workspace_id = $1 AND a.action ->> 'thread_id' = ANY($2::text[])
ORDER BY a.action ->> 'thread_id', a.enabled DESC, a.created_at DESC;

-- ---- OAuth 2.1 authorization server (db/oauth.py) ---------------------------------------

-- name: insert_oauth_client
INSERT INTO oauth_clients (client_id, secret_hash, metadata, kind) VALUES ($1, $2, $3, $4)
RETURNING client_id, secret_hash, metadata, kind, created_at, fetched_at, last_used_at;

-- name: upsert_oauth_metadata_client
-- A Client ID Metadata Document, (re)read: its URL is the client_id.
INSERT INTO oauth_clients (client_id, metadata, kind) VALUES ($1, $2, 'metadata_document')
ON CONFLICT (client_id) DO UPDATE SET metadata = EXCLUDED.metadata, fetched_at = now()
    WHERE oauth_clients.kind = 'metadata_document'
RETURNING client_id, secret_hash, metadata, kind, created_at, fetched_at, last_used_at;

-- name: get_oauth_client
SELECT client_id, secret_hash, metadata, kind, created_at, fetched_at, last_used_at
FROM oauth_clients WHERE client_id = $1;

-- name: touch_oauth_client
UPDATE oauth_clients SET last_used_at = now() WHERE client_id = $1;

-- name: insert_oauth_code
INSERT INTO oauth_codes (code_hash, client_id, user_id, workspace_id, redirect_uri, scope,
                         resource, code_challenge, expires_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9);

-- name: consume_oauth_code
-- A code is good once: the first redemption marks it used, atomically.
UPDATE oauth_codes SET used_at = now()
WHERE code_hash = $1 AND client_id = $2 AND used_at IS NULL AND expires_at > now()
RETURNING code_hash, client_id, user_id, workspace_id, redirect_uri, scope, resource,
          code_challenge;

-- name: get_used_oauth_code_grant
-- The grant a code already redeemed produced (its reuse revokes that grant).
SELECT grant_id FROM oauth_codes WHERE code_hash = $1 AND used_at IS NOT NULL;

-- name: set_oauth_code_grant
UPDATE oauth_codes SET grant_id = $2 WHERE code_hash = $1;

-- name: upsert_oauth_grant
INSERT INTO oauth_grants (client_id, workspace_id, user_id, scope, resource)
VALUES ($1, $2, $3, $4, $5)
ON CONFLICT (client_id, workspace_id, user_id) WHERE revoked_at IS NULL
DO UPDATE SET scope = EXCLUDED.scope, resource = EXCLUDED.resource
RETURNING id;

-- name: insert_oauth_token
INSERT INTO oauth_tokens (grant_id, access_hash, refresh_hash, scope, access_expires_at,
                          refresh_expires_at)
VALUES ($1, $2, $3, $4, $5, $6)
RETURNING id;

-- name: consume_oauth_refresh_token
-- Rotation: the refresh token is spent by the request that presents it (the old pair dies),
-- only while its grant is live and its person is still a member of the workspace.
UPDATE oauth_tokens t SET revoked_at = now()
FROM oauth_grants g JOIN memberships m ON m.workspace_id = g.workspace_id AND m.user_id = g.user_id
WHERE t.refresh_hash = $1 AND t.revoked_at IS NULL AND t.refresh_expires_at > now()
    AND g.id = t.grant_id AND g.revoked_at IS NULL
RETURNING t.id, t.grant_id, t.scope, g.client_id, g.workspace_id, g.user_id, g.resource;

-- name: get_spent_oauth_refresh_grant
-- The grant of a refresh token already spent: presenting it again revokes the grant.
SELECT grant_id FROM oauth_tokens WHERE refresh_hash = $1 AND revoked_at IS NOT NULL;

-- name: find_oauth_access_token
-- A live access token, its grant, and the granting person's current role in the workspace.
SELECT t.id, t.grant_id, t.scope, t.access_expires_at, g.client_id, g.workspace_id,
       g.user_id, g.resource, m.role
FROM oauth_tokens t
JOIN oauth_grants g ON g.id = t.grant_id
JOIN memberships m ON m.workspace_id = g.workspace_id AND m.user_id = g.user_id
WHERE t.access_hash = $1 AND t.revoked_at IS NULL AND t.access_expires_at > now()
    AND g.revoked_at IS NULL;

-- name: find_oauth_token_for_revocation
-- A token of a client by either of its halves (RFC 7009), revoked or not.
SELECT t.id, t.grant_id, g.client_id
FROM oauth_tokens t JOIN oauth_grants g ON g.id = t.grant_id
WHERE (t.access_hash = $1 OR t.refresh_hash = $1);

-- name: revoke_oauth_token
UPDATE oauth_tokens SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL;

-- name: revoke_oauth_grant
-- A grant and every token of it; $2 scopes it to a workspace (NULL: any, for reuse detection).
WITH g AS (
    UPDATE oauth_grants SET revoked_at = now()
    WHERE id = $1 AND ($2::uuid IS NULL OR workspace_id = $2) AND revoked_at IS NULL
    RETURNING id
)
UPDATE oauth_tokens SET revoked_at = now()
WHERE grant_id IN (SELECT id FROM g) AND revoked_at IS NULL;

-- name: touch_oauth_grant
UPDATE oauth_grants SET last_used_at = now() WHERE id = $1;

-- name: list_oauth_grants
-- The connected agents of a workspace, newest first (revoked ones of the last 30 days too).
SELECT g.id, g.client_id, c.metadata ->> 'client_name' AS client_name,
       c.metadata ->> 'client_uri' AS client_uri, c.kind AS client_kind, g.scope,
       u.email AS granted_by, g.created_at, g.last_used_at, g.revoked_at
FROM oauth_grants g
JOIN oauth_clients c ON c.client_id = g.client_id
JOIN users u ON u.id = g.user_id
WHERE g.workspace_id = $1 AND (g.revoked_at IS NULL OR g.revoked_at > now() - interval '30 days')
ORDER BY g.created_at DESC
LIMIT 200;

-- name: get_oauth_grant
SELECT g.id, g.client_id, c.metadata ->> 'client_name' AS client_name,
       c.metadata ->> 'client_uri' AS client_uri, c.kind AS client_kind, g.scope,
       u.email AS granted_by, g.created_at, g.last_used_at, g.revoked_at
FROM oauth_grants g
JOIN oauth_clients c ON c.client_id = g.client_id
JOIN users u ON u.id = g.user_id
WHERE g.id = $1 AND g.workspace_id = $2;

-- name: delete_expired_oauth_codes
DELETE FROM oauth_codes WHERE expires_at < now() - interval '1 day';

-- name: delete_expired_oauth_tokens
DELETE FROM oauth_tokens
WHERE greatest(access_expires_at, refresh_expires_at) < now() - interval '1 day';

-- name: delete_unused_oauth_clients
-- Clients nobody uses: registered ones with no live grant, idle for $1 days (a client that
-- registered and never got a grant goes after one day).
DELETE FROM oauth_clients c
WHERE NOT EXISTS (SELECT 1 FROM oauth_grants g WHERE g.client_id = c.client_id
                  AND g.revoked_at IS NULL)
    AND (coalesce(c.last_used_at, c.created_at) < now() - make_interval(days => $1)
         OR (c.last_used_at IS NULL AND c.created_at < now() - interval '1 day'));

-- name: insert_job_artifact
-- A file of a job's result, owned by the job's workspace and expiring with the job.
INSERT INTO job_artifacts (job_id, workspace_id, content_type, body, expires_at)
SELECT id, workspace_id, $2, $3, expires_at FROM jobs WHERE id = $1
RETURNING id, expires_at;

-- name: get_job_artifact
-- A job's file, for that job's workspace only, until it expires.
SELECT content_type, body FROM job_artifacts
WHERE id = $1 AND job_id = $2 AND workspace_id = $3 AND expires_at > now();

-- ---- Feeds, default targets (issue #27, migration 0012; repo: db/feeds.py) ----------------

-- name: set_notification_target_default
-- Make one target the default (the caller cleared the old default in the same transaction).
UPDATE notification_targets SET is_default = $3 WHERE id = $1 AND workspace_id = $2
RETURNING id, workspace_id, name, kind, display, url_encrypted, signing_encrypted, is_default,
          created_at;

-- name: upsert_feed_token
-- Create a scope's feed, or rotate it in place (same id, new hash: the old URL stops at once).
INSERT INTO feed_tokens (workspace_id, automation_id, token_hash, prefix, created_by)
VALUES ($1, $2, $3, $4, $5)
ON CONFLICT (workspace_id) WHERE automation_id IS NULL
DO UPDATE SET token_hash = EXCLUDED.token_hash, prefix = EXCLUDED.prefix, rotated_at = now(),
              last_used_at = NULL
RETURNING id, workspace_id, automation_id, prefix, created_at, rotated_at, last_used_at;

-- name: upsert_watch_feed_token
INSERT INTO feed_tokens (workspace_id, automation_id, token_hash, prefix, created_by)
VALUES ($1, $2, $3, $4, $5)
ON CONFLICT (automation_id) WHERE automation_id IS NOT NULL
DO UPDATE SET token_hash = EXCLUDED.token_hash, prefix = EXCLUDED.prefix, rotated_at = now(),
              last_used_at = NULL
RETURNING id, workspace_id, automation_id, prefix, created_at, rotated_at, last_used_at;

-- name: list_feed_tokens
SELECT id, workspace_id, automation_id, prefix, created_at, rotated_at, last_used_at
FROM feed_tokens WHERE workspace_id = $1 ORDER BY automation_id NULLS FIRST, created_at;

-- name: delete_feed_token
DELETE FROM feed_tokens WHERE id = $1 AND workspace_id = $2 RETURNING id;

-- name: use_feed_token
-- The feed a token opens (touching last_used_at), or nothing.
UPDATE feed_tokens SET last_used_at = now() WHERE token_hash = $1
RETURNING id, workspace_id, automation_id, prefix, created_at, rotated_at, last_used_at;

-- name: list_changed_runs
-- The newest runs that found a change or whose condition became true, of the workspace or of
-- one watch ($2), for its feed (automation_runs_feed_idx).
SELECT r.id, r.automation_id, r.finished_at, coalesce(r.changes, '{}'::jsonb) AS changes,
       a.action, w.name AS workspace_name, coalesce(r.condition_became_met, false) AS became_met,
       r.value
FROM automation_runs r
JOIN automations a ON a.id = r.automation_id AND a.workspace_id = r.workspace_id
JOIN workspaces w ON w.id = r.workspace_id
WHERE r.workspace_id = $1 AND ($2::uuid IS NULL OR r.automation_id = $2)
  AND ((r.changes ->> 'changed') = 'true' OR r.condition_became_met)
  AND r.finished_at IS NOT NULL
ORDER BY r.finished_at DESC LIMIT $3;

-- name: get_workspace_name
SELECT name FROM workspaces WHERE id = $1;

-- name: export_watches
-- The workspace's watches with their chat's title, oldest first (the order they were made).
SELECT a.id, a.trigger, a.action, a.enabled, a.notify, c.title
FROM automations a
JOIN chats c ON c.id = (a.action ->> 'thread_id')::uuid AND c.workspace_id = a.workspace_id
WHERE a.workspace_id = $1
ORDER BY a.created_at LIMIT $2;

-- Issue #27: the watches page, the history of checks, the page at a check, retention, zones.

-- name: list_watch_rows
-- The workspace's watches with what the watches page shows: the last run, the last check
-- that succeeded, the last one that found a change, and the page the last check read.
SELECT a.id, a.workspace_id, a.created_by, a.trigger, a.action, a.enabled, a.next_run_at,
       a.notify, a.created_at, a.updated_at,
       r.status AS last_status, r.scheduled_for AS last_scheduled_for,
       r.condition_met AS last_condition_met, r.value AS last_value, r.error AS last_error,
       ok.finished_at AS last_checked_at, ch.finished_at AS last_changed_at,
       pg.url AS page_url, pg.title AS page_title, coalesce(c.title, '') AS chat_title
FROM automations a
LEFT JOIN chats c ON c.id = (a.action ->> 'thread_id')::uuid AND c.workspace_id = a.workspace_id
LEFT JOIN LATERAL (
    SELECT status, scheduled_for, condition_met, value, error FROM automation_runs
    WHERE automation_id = a.id ORDER BY scheduled_for DESC LIMIT 1
) r ON true
LEFT JOIN LATERAL (
    SELECT finished_at FROM automation_runs
    WHERE automation_id = a.id AND status = 'succeeded' ORDER BY scheduled_for DESC LIMIT 1
) ok ON true
LEFT JOIN LATERAL (
    SELECT finished_at FROM automation_runs
    WHERE automation_id = a.id AND status = 'succeeded' AND (changes ->> 'changed')::boolean
    ORDER BY scheduled_for DESC LIMIT 1
) ch ON true
LEFT JOIN LATERAL (
    SELECT url, title FROM run_pages WHERE automation_id = a.id AND kind = 'page'
    ORDER BY checked_at DESC LIMIT 1
) pg ON true
WHERE a.workspace_id = $1
ORDER BY a.created_at DESC
LIMIT $2;

-- name: list_checks
-- A watch's checks, newest first, before the cursor $3 (a scheduled_for).
SELECT r.id, r.scheduled_for, r.manual, r.status, r.error, r.started_at, r.finished_at,
       r.condition_met, r.value, r.credits, r.changes IS NOT NULL AS compared,
       coalesce((r.changes ->> 'changed')::boolean, false) AS changed,
       (SELECT count(*) FROM run_pages p WHERE p.run_id = r.id)::int AS pages
FROM automation_runs r
WHERE r.automation_id = $1 AND r.workspace_id = $2 AND r.scheduled_for < $3
ORDER BY r.scheduled_for DESC
LIMIT $4;

-- name: get_check
-- One check of a watch, by id, in the caller's workspace.
SELECT r.id, r.scheduled_for, r.manual, r.status, r.error, r.started_at, r.finished_at,
       r.condition_met, r.value, r.credits, r.changes IS NOT NULL AS compared,
       coalesce((r.changes ->> 'changed')::boolean, false) AS changed,
       (SELECT count(*) FROM run_pages p WHERE p.run_id = r.id)::int AS pages
FROM automation_runs r
WHERE r.id = $1 AND r.automation_id = $2 AND r.workspace_id = $3;

-- name: previous_read_check
-- The latest check of the watch before $3 that read a page (the default side of a diff).
SELECT r.id FROM automation_runs r
WHERE r.automation_id = $1 AND r.workspace_id = $2 AND r.scheduled_for < $3
    AND EXISTS (SELECT 1 FROM run_pages p WHERE p.run_id = r.id)
ORDER BY r.scheduled_for DESC LIMIT 1;

-- name: get_check_pages
-- The pages a check read, with their stored (compressed) content and the content it is
-- compressed against, if any.
SELECT p.url, p.title, p.kind, p.digest, c.body, c.size, b.body AS base_body
FROM run_pages p
JOIN page_contents c ON c.automation_id = p.automation_id AND c.digest = p.digest
LEFT JOIN page_contents b ON b.automation_id = c.automation_id AND b.digest = c.base
WHERE p.run_id = $1 AND p.workspace_id = $2
ORDER BY p.url
LIMIT 50;

-- name: latest_base_content
-- The latest content of this page at this watch compressed on its own (what the next one may
-- be compressed against); touched, so the orphan sweep leaves it while a check uses it.
UPDATE page_contents t SET seen_at = now()
FROM (
    SELECT c.digest FROM run_pages p
    JOIN page_contents c ON c.automation_id = p.automation_id AND c.digest = p.digest
    WHERE p.automation_id = $1 AND p.url = $2 AND c.base IS NULL
    ORDER BY p.checked_at DESC
    LIMIT 1
) latest
WHERE t.automation_id = $1 AND t.digest = latest.digest
RETURNING t.digest, t.body;

-- name: content_exists
-- Whether the content is stored already; touched (and so locked until the check's transaction
-- ends): the orphan sweep can no longer take it from under the check that reuses it.
UPDATE page_contents SET seen_at = now() WHERE automation_id = $1 AND digest = $2
RETURNING true;

-- name: upsert_page_content
-- A page's content, once per watch per digest; a repeat refreshes seen_at so the orphan sweep
-- (which only takes contents unseen for an hour) never races a check that reuses it.
INSERT INTO page_contents (automation_id, workspace_id, digest, body, size, base)
VALUES ($1, $2, $3, $4, $5, $6)
ON CONFLICT (automation_id, digest) DO UPDATE SET seen_at = now();

-- name: insert_run_page
-- $7: 'page' (a page's markdown) or 'items' (a search's or a maps search's results).
INSERT INTO run_pages (run_id, automation_id, workspace_id, url, title, digest, kind)
VALUES ($1, $2, $3, $4, $5, $6, $7)
ON CONFLICT (run_id, url) DO UPDATE
SET title = EXCLUDED.title, digest = EXCLUDED.digest, kind = EXCLUDED.kind;

-- name: set_run_credits
UPDATE automation_runs SET credits = $2 WHERE id = $1;

-- name: store_seen_page
-- A one-page check whose content ($6) this watch stores already, in one statement: the content
-- touched (seen_at, as content_exists does: its row lock holds until the statement ends, so the
-- orphan sweep cannot take it from under the pointer), the check's pointer to it
-- (insert_run_page) and the check's credits ($8, set_run_credits). false: the content is not
-- stored and nothing was written.
WITH touched AS (
    UPDATE page_contents SET seen_at = now() WHERE automation_id = $2 AND digest = $6
    RETURNING digest
), page AS (
    INSERT INTO run_pages (run_id, automation_id, workspace_id, url, title, digest, kind)
    SELECT $1, $2, $3, $4, $5, touched.digest, $7 FROM touched
    ON CONFLICT (run_id, url) DO UPDATE
    SET title = EXCLUDED.title, digest = EXCLUDED.digest, kind = EXCLUDED.kind
    RETURNING 1
), charged AS (
    UPDATE automation_runs SET credits = $8 WHERE id = $1 AND EXISTS (SELECT FROM page)
)
SELECT EXISTS (SELECT FROM page);

-- name: get_history_pruned
SELECT a.history_pruned_before, w.history_retention_days
FROM automations a JOIN workspaces w ON w.id = a.workspace_id
WHERE a.id = $1 AND a.workspace_id = $2;

-- name: prune_history
-- At most $1 finished checks older than their workspace's retention; each watch that lost
-- some remembers the cutoff, so its history says what was pruned.
WITH doomed AS (
    SELECT r.id, r.automation_id, now() - make_interval(days => w.history_retention_days) AS cutoff
    FROM automation_runs r JOIN workspaces w ON w.id = r.workspace_id
    WHERE r.scheduled_for < now() - make_interval(days => w.history_retention_days)
        AND r.status NOT IN ('queued', 'running')
    LIMIT $1
), gone AS (
    DELETE FROM automation_runs r USING doomed d WHERE r.id = d.id
    RETURNING r.automation_id, d.cutoff
), marked AS (
    UPDATE automations a SET history_pruned_before = greatest(a.history_pruned_before, m.cutoff)
    FROM (SELECT automation_id, max(cutoff) AS cutoff FROM gone GROUP BY automation_id) m
    WHERE a.id = m.automation_id
    RETURNING a.id
)
SELECT (SELECT count(*) FROM gone)::int AS runs, (SELECT count(*) FROM marked)::int AS watches;

-- name: prune_page_contents
-- Contents no check points at any more and no content is compressed against, unseen for an
-- hour (a base goes in a later sweep, once the contents on it are gone).
DELETE FROM page_contents c
WHERE c.seen_at < now() - interval '1 hour'
    AND NOT EXISTS (SELECT 1 FROM run_pages p
                    WHERE p.automation_id = c.automation_id AND p.digest = c.digest)
    AND NOT EXISTS (SELECT 1 FROM page_contents d
                    WHERE d.automation_id = c.automation_id AND d.base = c.digest);

-- name: get_workspace_prefs
SELECT timezone, history_retention_days FROM workspaces WHERE id = $1;

-- name: update_workspace_prefs
UPDATE workspaces
SET timezone = coalesce($2, timezone),
    history_retention_days = coalesce($3, history_retention_days)
WHERE id = $1
RETURNING timezone, history_retention_days;

-- name: history_storage
-- What a watch's stored history of pages takes, in bytes (compressed contents + their rows).
SELECT coalesce((SELECT sum(octet_length(body)) FROM page_contents WHERE automation_id = $1), 0)
       + coalesce((SELECT sum(pg_column_size(p.*)) FROM run_pages p WHERE automation_id = $1), 0);

-- name: manual_runs
-- Which of these runs were asked for (Run now), not scheduled.
SELECT id FROM automation_runs WHERE workspace_id = $1 AND id = ANY($2::uuid[]) AND manual;
