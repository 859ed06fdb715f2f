"""The MCP server (`mcp_server`): each operation's tool made from its declaration, its schema
lean as a model is shown it, `Memory` called over stdio; what was wrong with a tool's
arguments said in one line (`arguments`). A front: it may import `memory`, `doors`,
`operations`, `options`, `results`, `errors`, `text/` (how memory is shown) and `storage/`
(its path checks), and nothing imports it but the command line.
"""
