"""The MCP server (`mcp_server`): each tool's schema, its arguments checked and bounded, and
`Memory` called over stdio. A front: it may import `memory`, `options`, `results` and the
store's path checks, and nothing imports it but the command line.
"""
