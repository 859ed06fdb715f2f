"""Squad as tiermem's `Host` (`host.Host`): the one object through which the core reads
Squad's agent folders, charters and spawn load, and writes its decision log and inbox.

`Memory` hands `SquadHost` to the `Context`; the core asks `ctx.host`, never this package.
Each method imports what it uses when called: a command loads only the Squad code it runs.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ...context import Context
    from ...host import FollowReport, InboxReport
    from ...results.figures import SquadLoad
    from ...storage.entries import Entry


class SquadHost:
    """Squad's `.squad/` around a store."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx

    def agent_folders(self) -> list[str]:
        """The agents Squad has folders for (`.squad/agents/*/`), lower-cased."""
        from .agent_folders import names

        return names(self.ctx)

    def has_folder(self, agent: str) -> bool:
        """Whether Squad has a folder for the agent, in any case."""
        from .agent_folders import has_folder

        return has_folder(self.ctx, agent)

    def people(self) -> set[str]:
        """The words of every name team.md gives."""
        from .agent_folders import people

        return people(self.ctx)

    def tool_words(self) -> set[str]:
        """Squad's own words (`inbox`, `config`, `squad`...) unless the team works on them."""
        from .agent_folders import tool_words

        return tool_words(self.ctx)

    def name_words(self, text: str) -> set[str]:
        """The words of a name as Squad's files write it ("Brady (via Copilot)": brady)."""
        from .agent_folders import name_words

        return name_words(text)

    def charter(self, agent: str) -> str:
        """The agent's `charter.md`."""
        from .agent_folders import charter

        return charter(self.ctx, agent)

    def load_tokens(self, agent: str) -> int | None:
        """Tokens of a Squad spawn today: the whole history.md and decisions.md."""
        from .spawn_load import load_tokens

        return load_tokens(self.ctx, agent)

    def loads(self, agents: list[str]) -> list[SquadLoad]:
        """What a Squad spawn of each agent with a history.md loads today."""
        from .spawn_load import loads

        return loads(self.ctx, agents)

    def decision_entries(
        self, text: str, *, by: str, stamp: str, session: str, source: str, inbox_file: str
    ) -> list[Entry]:
        """The team entries of Squad-style decision blocks (`### date: title`)."""
        from ..reading.decision_blocks import entries_of

        return entries_of(
            text, by=by, stamp=stamp, session=session, source=source, inbox_file=inbox_file
        )

    def check_writable(self) -> None:
        """Refuse a write on a team whose histories and decisions are not files of this
        working tree (a `squad-state` branch, a team elsewhere: `team_state`)."""
        from .team_state import of_root

        of_root(self.ctx.layout.root)

    def check_decision_log(self) -> None:
        """Refuse a decisions.md that cannot take a decision (a link, a damaged file)."""
        from .decision_log import check

        check(self.ctx)

    def append_decision(self, text: str, by: str) -> None:
        """Add a decision to `.squad/decisions.md`."""
        from .decision_log import append

        append(self.ctx, text, by)

    def merge_inbox(self, dry_run: bool) -> InboxReport:
        """Merge `.squad/decisions/inbox/` into decisions.md and the team's tier."""
        from .inbox_merge import merge

        return merge(self.ctx, dry_run=dry_run)

    def follow(self, dry_run: bool) -> FollowReport:
        """Import again the Squad files that changed since the last import (`follow`)."""
        from ..importer.follow import follow

        return follow(self.ctx, dry_run=dry_run)
