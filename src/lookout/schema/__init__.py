"""Marshmallow schemas of verbs and routes (layer 2); no OpenAPI assembly (that is the door's:
lookout.routes.openapi).

Imports only foundations (layer 1) and its layer-2 siblings (db, capabilities).
"""
