"""The relevance engine: what a spawn loads and what a search returns, and in what order.

It owns every ranking rule; what a word is, it takes from `text.words`. One call answers a
spawn (`engine`: `choose` gives the selection, with why each entry was chosen). Candidates
come from every tier and the archive, of the asking agent and of the team (the agent's own
weigh more, nobody's are shut out; `candidates`); they are cut into passages
(`index.passages`: lines, bullets, sentences, cut once when indexed), scored against the
query the task and the agent's current context make (`query`, `scoring`), each entry weighed
by its chance of being used (`worth`), and packed into the room a prompt has (`packing`),
each group of passages under a short label of its entry so the reader can ask for the entry
whole. The policies that bear on a task are pinned ahead of them (`pinning`), and the
situation read from the task weighs the tiers (`situation`). What a search result shows of
the entries it found is a place, a matching passage with its neighbours (`places`), and the
text of it shown (`excerpts`).

The `Ranker` (`ranking`) is the part a caller can swap: how much an entry counts for the
asking agent and the order hits are offered in. It changes the order of search results,
the order a spawn pins policies in and the weight of a spawn's passages of each entry; the
pools of candidates, the team's, the wiki's and the tiers' weights and the packing are the
engine's own. It may import `index/`, `storage/`, `text/`, `results` and `errors`; it never
writes.
"""
