"""The one adapter (layer 3): principals, authentication of keys and sessions, authz,
metering, credits, rate limits, jobs, the envelope, accounts and OAuth grants.

Imports only layers 1-2 (foundations; db, schema, capabilities); never aiohttp.web, the doors
or anything above. Reading a request is the door's (lookout.routes.authn).
"""
