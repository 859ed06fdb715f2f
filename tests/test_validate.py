"""Names and settings are checked before they are used: Windows device names and `team`
(the team's own memory) are no agent's names, and every setting is range-checked with the
key named."""

from __future__ import annotations

from pathlib import Path

import pytest

from tiermem.errors import ParseError, UsageError
from tiermem.storage import config, validate
from tiermem.storage.layout import Layout


@pytest.mark.parametrize(
    "name", ["con", "CON", "nul", "aux", "prn", "com1", "com9", "lpt1", "lpt9", "con.txt", "Nul.x"]
)
def test_device_names_are_no_names(name: str) -> None:
    for what in ("agent", "topic"):
        with pytest.raises(UsageError, match="device name"):
            validate.name(name, what)


@pytest.mark.parametrize("name", ["com", "com10", "console", "lpt", "auxiliary", "nulls"])
def test_names_that_only_start_like_a_device_are_names(name: str) -> None:
    assert validate.name(name) == name


def test_team_is_no_agent_name_but_the_team_owns_files() -> None:
    with pytest.raises(UsageError, match="reserved for the team"):
        validate.name("team")
    with pytest.raises(UsageError, match="reserved for the team"):
        validate.name("Team", "agent")
    assert validate.name("team", "topic") == "team"
    assert validate.owner("team") == "team"
    layout = Layout(Path("/r"))
    assert layout.tier_file("cold", "team").name == "team.md"


def test_the_cli_refuses_team_and_devices_as_agents(tmp_path: Path) -> None:
    from reliability import cli

    cli(["init", "--root", str(tmp_path)])
    for argv in (["hot", "note", "team", "x"], ["hot", "note", "con", "x"]):
        code, _, err = cli(["--root", str(tmp_path), *argv])
        assert code == 2 and err.count("\n") == 1, err
    assert not list((tmp_path / ".squad" / "memory" / "hot").iterdir())


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("[cold]\nttl_days = -5\n", "cold.ttl_days"),
        ("[cold]\nttl_days = 100000000\n", "cold.ttl_days"),
        ("[hot]\nbudget_bytes = 0\n", "hot.budget_bytes"),
        ("[hot]\nmax_actions = 0\n", "hot.max_actions"),
        ("[scribe]\ncompression_target = 0\n", "scribe.compression_target"),
        ("[scribe]\npromote_min_sessions = -1\n", "scribe.promote_min_sessions"),
        ("[spawn]\nbudget_tokens = -1\n", "spawn.budget_tokens"),
        ("[summarizer]\ntimeout_seconds = nan\n", "summarizer.timeout_seconds"),
        ("[summarizer]\ntimeout_seconds = inf\n", "summarizer.timeout_seconds"),
        ("[summarizer]\nkind = 'gpt'\n", "summarizer.kind"),
    ],
)
def test_a_setting_out_of_range_is_a_parse_error_naming_it(
    tmp_path: Path, text: str, named: str
) -> None:
    path = tmp_path / "config.toml"
    path.write_text("# settings\n\n" + text, encoding="utf-8")
    with pytest.raises(ParseError, match=named) as caught:
        config.load(path)
    assert caught.value.line == 4


def test_the_defaults_are_in_range(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(config.render_default(), encoding="utf-8")
    assert config.load(path) == config.Config()
