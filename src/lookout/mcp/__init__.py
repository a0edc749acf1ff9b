"""MCP (layer 4): the protocol of the registry served as a remote MCP server, and a workspace's
own MCP servers consumed as connectors (the client).

Imports only its own package and layers 1-3; the aiohttp handler of `POST /mcp` is the door's
(lookout.routes.mcp_transport).
"""
