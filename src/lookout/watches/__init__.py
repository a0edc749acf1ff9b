"""Watches (layer 6): create / stop / find / run-now, dispatch, the scheduled run, cadence.

Imports only its own package and layers 1-5; enqueues through lookout.queue, never the actors.
"""
