"""`.squad/memory/config.toml`: every rule's default, and the user's overrides."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, fields, replace
from pathlib import Path

from ..errors import ParseError
from .safepath import read_bytes

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


@dataclass(frozen=True, slots=True)
class HotConfig:
    budget_bytes: int = 4096
    max_actions: int = 5


@dataclass(frozen=True, slots=True)
class ColdConfig:
    budget_bytes: int = 12288
    ttl_days: int = 30


@dataclass(frozen=True, slots=True)
class ScribeConfig:
    compression_target: int = 10
    promote_after_days: int = 7
    promote_min_sessions: int = 2


@dataclass(frozen=True, slots=True)
class SpawnConfig:
    budget_tokens: int = 2000


@dataclass(frozen=True, slots=True)
class SummarizerConfig:
    kind: str = "extractive"
    base_url: str = ""
    model: str = ""
    api_key_env: str = "OPENAI_API_KEY"
    timeout_seconds: float = 30.0


@dataclass(frozen=True, slots=True)
class Config:
    hot: HotConfig = field(default_factory=HotConfig)
    cold: ColdConfig = field(default_factory=ColdConfig)
    scribe: ScribeConfig = field(default_factory=ScribeConfig)
    spawn: SpawnConfig = field(default_factory=SpawnConfig)
    summarizer: SummarizerConfig = field(default_factory=SummarizerConfig)


_COMMENTS = {
    "hot": "The current session: always loaded, hard budget enforced on every write.",
    "hot.budget_bytes": "Size of a hot tier file; content that does not fit is checkpointed.",
    "hot.max_actions": "Only the last N actions stay in hot; older ones are archived.",
    "cold": "Summaries of past sessions, loaded when a task needs history.",
    "cold.budget_bytes": "Per-agent cold size that Scribe keeps by archiving the oldest entries.",
    "cold.ttl_days": "Cold entries unused for this many of the team's active days (days it "
    "wrote sessions down) leave cold, unless promoted.",
    "scribe": "The memory keeper.",
    "scribe.compression_target": "Aim for raw bytes / summary bytes of about this ratio.",
    "scribe.promote_after_days": "A structured entry this old (and not superseded) is stable.",
    "scribe.promote_min_sessions": "...or one whose subject recurs in this many sessions.",
    "spawn": "The spawn assembler.",
    "spawn.budget_tokens": "Tokens of the whole spawn prompt: task, hot, memory and the rest.",
    "summarizer": "Session summaries: 'extractive' (default, no model) or 'openai'.",
    "summarizer.kind": "'extractive' or 'openai' (needs the openai extra).",
    "summarizer.base_url": "OpenAI-compatible endpoint, e.g. http://localhost:8000/v1",
    "summarizer.model": "Model name sent to the endpoint.",
    "summarizer.api_key_env": "Environment variable that holds the API key (never this file).",
    "summarizer.timeout_seconds": "Give up and fall back to 'extractive' after this long.",
}


def _toml_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return str(value)


def _names(cls: type) -> tuple[str, ...]:
    """The field names of a settings class, in order."""
    return tuple(item.name for item in fields(cls))


def render_default() -> str:
    """The commented config.toml that `tiermem init` writes."""
    lines = ["# tiermem configuration. Every key is shown with its default.", ""]
    config = Config()
    for section in _names(Config):
        lines.append(f"# {_COMMENTS[section]}")
        lines.append(f"[{section}]")
        values = getattr(config, section)
        for item in _names(type(values)):
            lines.append(f"# {_COMMENTS[section + '.' + item]}")
            lines.append(f"{item} = {_toml_value(getattr(values, item))}")
        lines.append("")
    return "\n".join(lines)


# The values each setting takes (inclusive); outside them a value is a ParseError naming it.
RANGES: dict[str, tuple[float, float]] = {
    "hot.budget_bytes": (512, 1024 * 1024),
    "hot.max_actions": (1, 1000),
    "cold.budget_bytes": (1024, 1024**3),
    "cold.ttl_days": (1, 36500),
    "scribe.compression_target": (1, 1000),
    "scribe.promote_after_days": (0, 36500),
    "scribe.promote_min_sessions": (1, 1000),
    "spawn.budget_tokens": (0, 10_000_000),
    "summarizer.timeout_seconds": (0.001, 3600.0),
}
CHOICES = {"summarizer.kind": ("extractive", "openai")}
# Keys an earlier version wrote and no rule reads now: a config.toml that sets one still loads.
# (spawn.fill_share: memory now fills the whole budget, which is the user's limit.)
RETIRED = frozenset({"spawn.fill_share"})


def _check_value(name: str, value: object) -> str:
    """Why a value of the right type is still not one the setting takes ("" when it is)."""
    if name in CHOICES and value not in CHOICES[name]:
        return f"{name} must be one of {', '.join(CHOICES[name])}, not {value!r}"
    if name in RANGES and isinstance(value, int | float):
        low, high = RANGES[name]
        if not low <= value <= high:  # also false for NaN
            return f"{name} must be between {_number(low)} and {_number(high)}, not {value!r}"
    return ""


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


def _line_of(text: str, section: str, key: str) -> int:
    """The line where a key of a section is set (1 when it cannot be told)."""
    current = ""
    for n, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if stripped.startswith("["):
            current = stripped.strip("[] \t")
        elif current == section and stripped.split("=", 1)[0].strip() == key:
            return n
    return 1


def _merge_section(default: Any, raw: object, path: Path, section: str, text: str = "") -> Any:
    if not isinstance(raw, dict):
        raise ParseError(path, 1, f"[{section}] must be a table")
    known = _names(type(default))
    updates: dict[str, Any] = {}
    for key, value in raw.items():
        if f"{section}.{key}" in RETIRED:
            continue
        if key not in known:
            raise ParseError(path, _line_of(text, section, key), f"unknown key {section}.{key}")
        expected = type(getattr(default, key))
        if expected is float and isinstance(value, int):
            value = float(value)
        line = _line_of(text, section, key)
        if not isinstance(value, expected) or isinstance(value, bool) != (expected is bool):
            raise ParseError(path, line, f"{section}.{key} must be {expected.__name__}")
        if problem := _check_value(f"{section}.{key}", value):
            raise ParseError(path, line, problem)
        updates[key] = value
    return replace(default, **updates)


def load(path: Path) -> Config:
    """Read config.toml, falling back to defaults for anything it does not set."""
    config = Config()
    data = read_bytes(path)  # never through a link
    if data is None or data == render_default().encode("utf-8"):
        return config  # as `tiermem init` wrote it: every default, and no parser to import
    import tomllib  # only stores whose config was edited pay for the parser

    try:
        text = data.decode("utf-8")
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ParseError(path, _toml_line(exc), str(exc)) from None
    except UnicodeDecodeError:
        raise ParseError(path, 1, "not valid UTF-8") from None
    sections = set(_names(Config))
    updates: dict[str, Any] = {}
    for name, value in raw.items():
        if name not in sections:
            raise ParseError(path, _section_line(text, name), f"unknown section [{name}]")
        updates[name] = _merge_section(getattr(config, name), value, path, name, text)
    return replace(config, **updates)


_AT_LINE = re.compile(r"\(at line (\d+), column \d+\)$")


def _toml_line(exc: ValueError) -> int:
    """The line a TOML error is at: Python before 3.14 says it only in the message."""
    line = getattr(exc, "lineno", None)
    if isinstance(line, int) and line > 0:
        return line
    match = _AT_LINE.search(str(exc))
    return int(match.group(1)) if match else 1


def _section_line(text: str, section: str) -> int:
    """The line of a section's header (1 when it cannot be told)."""
    for n, line in enumerate(text.splitlines(), start=1):
        if line.strip().strip("[] \t") == section and line.lstrip().startswith("["):
            return n
    return 1
