"""`Memory`: the one API that the CLI, the MCP server and Python callers use.

Each operation's method takes its request's fields as typed keywords, builds the request
(`options`) and hands it to its door (`doors`) in one line: the request is checked against its
declaration, the door asks for what its step needs and hands the step the request. A front
builds the request itself and hands it over whole (`answer`). The rules live in the steps.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from . import doors, options
from .context import Context
from .doors import method
from .errors import NotFoundError
from .scribe.keeper import ScribeKeeper, configured_summarizer
from .squad.adapter.squad_host import SquadHost
from .storage import files, validate
from .storage.clock import Clock
from .storage.layout import Layout, discover_root
from .team import agents

TYPE_CHECKING = False  # typing is not imported at start-up
if TYPE_CHECKING:
    from .host import Summarizer
    from .index.protocol import IndexFactory
    from .index.tokens import TokenCounter
    from .relevance.ranking import Ranker
    from .storage.archive import Record
    from .storage.config import Config

MAX_SEARCH_LIMIT = validate.MAX_SEARCH_LIMIT


class Memory:
    """A tiermem store rooted at a folder that holds (or will hold) `.squad/`.

    Each swappable part is an argument, `None` meaning the shipped one: `index` opens the
    search index (`FtsIndex`), `summarizer` writes session summaries (the one config.toml
    names), `ranker` weighs entries for the asking agent and orders results (`OwnFirst`; see
    `relevance.ranking` for all it changes), `tokens` counts tokens (o200k_base).
    `tiermem.testing` has a fake of each.
    """

    def __init__(
        self,
        root: str | Path | None = None,
        *,
        now: datetime | str | None = None,
        must_exist: bool = True,
        index: IndexFactory | None = None,
        summarizer: Summarizer | None = None,
        ranker: Ranker | None = None,
        tokens: TokenCounter | None = None,
    ) -> None:
        self.root = discover_root(root) if must_exist or root is None else Path(root).resolve()
        self.context = Context(
            Layout(self.root),
            Clock(now),
            index=index,
            summarizer=summarizer,
            ranker=ranker,
            tokens=tokens,
            host=SquadHost,
            keeper=ScribeKeeper,
            summarizers=configured_summarizer,
        )

    @property
    def layout(self) -> Layout:
        """Where the store keeps each thing."""
        return self.context.layout

    @property
    def config(self) -> Config:
        """The store's settings (`.squad/memory/config.toml` over the defaults)."""
        return self.context.config

    @classmethod
    def init(
        cls, root: str | Path, *, now: datetime | str | None = None, squad_files: bool = True
    ) -> tuple[Memory, list[str]]:
        """Create the memory folders, config and git settings; return what was created.

        `squad_files=False` touches nothing outside `.squad/memory/` (as an import promises).
        """
        folder = Path(root).expanduser().resolve()
        from .squad.adapter.team_state import of_root
        from .storage.bootstrap import init_store

        if folder.is_dir():
            of_root(folder)  # a team whose state is off this working tree: nothing is made
        created = init_store(folder, squad_files=squad_files)
        return cls(folder, now=now), created

    def close(self) -> None:
        """Release the index connection."""
        self.context.close()

    def answer(self, door: str, request: object) -> object:
        """The result of the operation whose method is `door` (`operations.Operation.door`)
        for a request a front built whole: the request its step receives, once checked."""
        return doors.answer(self.context, doors.door(door), request)

    # --- each operation: its request's fields as keywords, the request to its door ------

    hot_set = method(options.HotSetRequest, doors.hot_set)
    hot_add = method(options.HotAddRequest, doors.hot_add)
    hot_unblock = method(options.HotUnblockRequest, doors.hot_unblock)
    hot_clear = method(options.AgentRequest, doors.hot_clear)
    hot_view = method(options.AgentRequest, doors.hot_view)
    team = method(options.NoRequest, doors.team)
    search = method(options.SearchRequest, doors.search)
    read_entry = method(options.ReadEntryRequest, doors.read_entry)
    tier_text = method(options.ReadTierRequest, doors.tier_text)
    forget = method(options.ForgetRequest, doors.forget)
    reindex = method(options.ReindexRequest, doors.reindex)
    end_session = method(options.AgentRequest, doors.end_session)
    scribe_run = method(options.ScribeRunRequest, doors.scribe_run)
    decide = method(options.DecideRequest, doors.decide)
    wiki_write = method(options.WikiWriteRequest, doors.wiki_write)
    wiki_pages = method(options.NoRequest, doors.wiki_pages)
    wiki_read = method(options.TopicRequest, doors.wiki_read)
    spawn = method(options.SpawnRequest, doors.spawn)
    log = method(options.LogRequest, doors.log)
    import_squad = method(options.ImportRequest, doors.import_squad)
    report = method(options.ReportRequest, doors.report)
    doctor = method(options.DoctorRequest, doors.doctor)
    stats = method(options.NoRequest, doors.stats)

    # --- what no front offers as an operation -------------------------------------------

    def agents(self) -> list[str]:
        """Every agent with memory in hot, cold or the archive."""
        return agents.with_memory(self.context)

    def read_archive(self, agent: str, record_id: str) -> Record:
        """One archive record."""
        from .storage import archive

        agent = validate.owner(agent)
        base = record_id.split("#")[0]
        if not files.is_file(archive.path_of(self.layout, agent, base)):
            raise NotFoundError(f"no archive record {base} for {agent}")
        return archive.read(self.layout, agent, base)

    def sync(self) -> None:
        """Bring the index up to date with the files (every read does this itself)."""
        self.context.require_store()
        self.context.take_notes()
        self.context.sync()
