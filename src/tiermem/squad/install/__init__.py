"""`tiermem squad install`: the install, check and uninstall (`installer`), the steps and their
report (`install_steps`), what it writes (`install_texts`) as sealed sections and lines
(`sealed_sections`, `sealed_lines`), the MCP configurations (`mcp_config`, `jsonc`), the paths
it may touch (`install_paths`, checked by `repo_paths`) and its record (`install_record`). It
may import the core and `squad.adapter` (where the team keeps its state), nothing else of
`squad/`.
"""
