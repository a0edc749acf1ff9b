"""Dramatiq actors. Import `lookout.actors.all` only after `lookout.broker.setup()`."""
