"""Chat turns (layer 5): the lease, persistence, the event stream of UI message parts.

Imports only its own package and layers 1-4 (never notify, its sibling, nor watches or a door).
"""
