"""What earlier imports archived of a Squad file: the text of each import record of it, by the
file's path. An import of a file that changed since reads them to tell the sections the team
left as they were (untouched: `placement.Planner.earlier_ids`) and the addresses a privacy
scrub took out (`scrubbed`)."""

from __future__ import annotations

from ...context import Context
from ...errors import TiermemError
from ...storage import archive, files


class Earlier:
    """The texts earlier imports archived of each Squad file, by its path (read once)."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.by_file: dict[str, dict[str, list[str]]] = {}  # agent -> rel -> record ids

    def texts(self, agent: str, rel: str, leave_out: set[str]) -> list[str]:
        """The text of every earlier import record of a file (those of this import left out)."""
        ids = self._records(agent).get(rel, [])
        found = []
        for record_id in ids:
            if record_id in leave_out:
                continue
            try:
                found.append(archive.read(self.ctx.layout, agent, record_id).text)
            except (TiermemError, OSError):
                continue  # a damaged record: `doctor` says it
        return found

    def _records(self, agent: str) -> dict[str, list[str]]:
        if agent not in self.by_file:
            self.by_file[agent] = {}
            folder = self.ctx.layout.tier_dir("archive") / agent
            try:
                paths = files.memory_files(folder) if files.is_folder(folder) else []
            except TiermemError:
                paths = []
            for path in paths:
                fields = archive.header(path)
                if fields.get("kind") == "import" and fields.get("source"):
                    self.by_file[agent].setdefault(fields["source"], []).append(path.stem)
        return self.by_file[agent]
