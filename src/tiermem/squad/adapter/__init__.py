"""Squad as tiermem's host: the `SquadHost` the Context carries (`squad_host`), reading agent
folders and charters (`agent_folders`) and what a Squad spawn loads (`spawn_load`), where the
team keeps its state (`team_state`), writing the decision log (`decision_log`) and merging
its inbox (`inbox_files`, `inbox_merge`). It may import the core, `squad.reading` and
`squad.importer` (the host follows the team's files by importing what changed).
"""
