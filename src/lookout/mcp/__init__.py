"""MCP: the registry served as a remote MCP server (`POST /mcp`), and a workspace's own MCP servers
consumed as connectors."""
