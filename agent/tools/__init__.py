"""Toolsets: the catalog, local tools, MCP sources and their offline stand-ins."""
