-- A connector's tools reach the chat agent only when the workspace marks it for chat use
-- (issue #22: a scraped page could have the model call any connector tool). New connectors
-- start unmarked. Connectors that exist when this runs keep chat use: the chat agent was their
-- only use, so registering one was the consent; unmark one with
-- PATCH /api/workspaces/{ws}/mcp-connectors/{id} {"chat_use": false}.
ALTER TABLE mcp_connectors ADD COLUMN chat_use boolean NOT NULL DEFAULT true;
ALTER TABLE mcp_connectors ALTER COLUMN chat_use SET DEFAULT false;
