"""The relevance engine: what a spawn loads and what a search returns, and in what order.

It owns every ranking rule and the one definition of a word (`words`). Candidates come from
every tier and the archive, of the asking agent and of the team (the agent's own weigh more,
nobody's are shut out); they are cut into passages (`index.passages`: lines, bullets,
sentences, cut once when indexed), scored against the task, the agent's current context and
the team's concrete facts (`scoring`), and packed into the room a prompt has (`packing`),
each group of passages under a short label of its entry so the reader can ask for the entry
whole.

It also holds the order of search results (`ranking`). It may import `index/`, `storage/`,
`text/`, `results` and `errors`; it never writes.
"""
