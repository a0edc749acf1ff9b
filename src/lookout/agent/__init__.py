"""The agent (layer 4): intent router, LangGraph graph, planners (rules / LLM), what changed.

Imports only its own package, lookout.mcp (same layer) and layers 1-3; never chat, notify,
watches or a door. Enqueueing goes through lookout.queue.
"""
