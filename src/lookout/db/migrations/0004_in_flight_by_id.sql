-- Partial indexes the planner misused for lookups by key. With statistics taken while the
-- tables were small (a fresh install, or before autovacuum's next analyze), a partial index
-- looks nearly empty, so the planner read it whole to find one row, and its real size grows
-- with every run, job and reservation: a turn's settle read every reservation ever made
-- (7,000 rows after 7 cycles of bench/versus.py; Postgres CPU a turn grew 1.9 -> 3.4 ms).

-- Runs and jobs in flight: looked up by id (claim, lease renewal, finish) on every turn and
-- job, swept once a minute. Keyed on id, either index finds the one row; the sweeps read the
-- whole partial index as before.
DROP INDEX automation_runs_queued_idx;
CREATE INDEX automation_runs_in_flight_idx ON automation_runs (id)
    WHERE status IN ('queued', 'running');
DROP INDEX jobs_active_idx;
CREATE INDEX jobs_in_flight_idx ON jobs (id) WHERE status IN ('queued', 'running');

-- Reservations by deadline, for the stale-reservation sweep (deadline < now() implies the
-- predicate): a lookup of one reservation (kind = 'reserve' by workspace and request id) does
-- not, so it uses the unique (workspace_id, request_id, kind) index whatever the statistics say.
DROP INDEX credit_ledger_open_reservations_idx;
CREATE INDEX credit_ledger_reservation_deadline_idx ON credit_ledger (deadline)
    WHERE kind = 'reserve' AND deadline IS NOT NULL;
