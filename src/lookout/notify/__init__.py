"""Notifications (layer 5): a copy of what a watch found, sent outside the chat (Apprise,
signed webhooks).

Imports only its own package and layers 1-4 (never chat, its sibling); sends through
lookout.queue, never the actors.
"""
