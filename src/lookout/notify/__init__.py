"""Notifications: a copy of what a watch found, sent outside the chat (Apprise, signed webhooks)."""
