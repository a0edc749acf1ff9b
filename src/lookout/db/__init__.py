"""The database (layer 2): the asyncpg pool, queries.sql and its typed repo functions, the
LangGraph checkpointer.

Imports only foundations (layer 1) and its layer-2 siblings (schema, capabilities).
"""
