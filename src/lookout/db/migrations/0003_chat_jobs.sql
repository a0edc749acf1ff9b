-- A job started from a chat remembers its chat, and whether the turn stopped waiting for it:
-- then the worker posts the result to the chat when the job ends.
ALTER TABLE jobs ADD COLUMN chat_id uuid REFERENCES chats (id) ON DELETE SET NULL;
ALTER TABLE jobs ADD COLUMN post_to_chat boolean NOT NULL DEFAULT false;
