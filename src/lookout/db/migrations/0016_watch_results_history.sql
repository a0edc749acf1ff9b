-- Issue #27 (leftovers). A search's, a site's or a maps search's watch keeps its results at each
-- check the way a page watch keeps its page (page_contents: once per distinct content,
-- compressed): a check's row says which of the two it points at. 'items' rows are never the
-- watches page's page (its URL and title come from 'page' rows only).
ALTER TABLE run_pages
    ADD COLUMN kind text NOT NULL DEFAULT 'page' CHECK (kind IN ('page', 'items'));

-- The run where a watch's condition became true (the verdict that notifies, edge-triggered as
-- its notification is): a feed lists it even when no diff was found. Null before this
-- migration and on runs without a condition.
ALTER TABLE automation_runs ADD COLUMN condition_became_met boolean;

-- A feed's entries, newest first: runs that found a change or whose condition became true.
CREATE INDEX automation_runs_feed_idx ON automation_runs (workspace_id, finished_at DESC)
    WHERE (changes ->> 'changed') = 'true' OR condition_became_met;
-- It replaces the index of changed runs only (0012), which nothing else reads.
DROP INDEX automation_runs_changed_idx;
