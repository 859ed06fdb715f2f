"""`tiermem squad install` then `--uninstall` changes no byte of the user's: MCP files edited
as text (comments, order, a name twice, numbers as spelled, escapes, CRLF), charters and
Squad's instruction files, each also with the user's own edits made after the install.

Every file is hand-made by the generators below; the figure is the count of files whose
bytes after the round trip differ from the user's (the target is 0).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from test_squad_install import make_team, states, team
from tiermem.squad.install import install_texts, installer

__all__ = ["team"]  # the hand-made Squad team, a fixture of test_squad_install

RunCli = Callable[..., tuple[int, str, str]]
Edit = Callable[[str], str]


def _same(text: str) -> str:
    return text


@dataclass(frozen=True)
class Case:
    """A user's file, what the user changes after the install (on the installed text), and
    what the file must hold after the uninstall (from the user's own text)."""

    name: str
    text: str
    edit: Edit = _same
    expected: Edit = _same


def run(run_cli: RunCli, team: Path, *args: str) -> str:
    code, out, err = run_cli("squad", "install", *args, "--root", str(team))
    assert (code, err) == (0, ""), (args, out, err)
    return out


# --- MCP files --------------------------------------------------------------------------------

SERVER = '{"command": "npx", "args": ["-y", "@bradygaster/squad-cli", "state-mcp"]}'


def _mcp(key: str, body: str, eol: str = "\n", unit: str = "  ", tail: str = "") -> str:
    """A file with `body` (lines joined by LF) as its servers, in the given line ends and
    indentation."""
    inner = "\n".join(unit * 2 + line for line in body.splitlines())
    text = f'{{\n{unit}"{key}": {{\n{inner}\n{unit}}}{tail}\n}}\n'
    return text.replace("\n", eol)


def _mcp_texts(key: str) -> dict[str, str]:
    """Hand-made MCP files: the layouts editors and people write, and what they hold."""
    plain = f'"squad_state": {SERVER}'
    texts = {
        "squad's own": json.dumps({key: {"squad_state": json.loads(SERVER)}}, indent=2) + "\n",
        "four spaces": _mcp(key, plain, unit="    "),
        "tabs": _mcp(key, plain, unit="\t"),
        "one line": f'{{"{key}": {{"squad_state": {SERVER}}}}}\n',
        "minified": f'{{"{key}":{{"a":{{"command":"x"}},"b":{{"command":"y"}}}}}}',
        "no final newline": _mcp(key, plain).rstrip("\n"),
        "empty servers on one line": f'{{\n  "{key}": {{}}\n}}\n',
        "empty servers on lines": f'{{\n  "{key}": {{\n  }}\n}}\n',
        "empty servers with a comment": f'{{\n  "{key}": {{ // none yet\n  }}\n}}\n',
        "no servers at all": '{\n  "inputs": []\n}\n',
        "an empty object": "{}\n",
        "comments everywhere": (
            f'// top\n{{\n  /* servers */ "{key}": {{ // mine\n'
            '    "a": {"command": "x"}, // hosted\n    /* b */ "b": {"command": "y"}\n  }\n}\n'
        ),
        "a block comment after the brace": f'{{\n  "{key}": {{ /* one\n  two */\n'
        '    "a": {"command": "x"}\n  }\n}\n',
        "trailing commas": f'{{\n  "{key}": {{\n    "a": {{"command": "x",}},\n  }},\n}}\n',
        "a server name twice": _mcp(key, '"a": {"command": "x"},\n"a": {"command": "y"}'),
        "the servers key twice": f'{{\n  "{key}": {{"old": {{}}}},\n  "{key}": {{\n'
        '    "a": {"command": "x"}\n  }\n}\n',
        "a name twice inside a server": _mcp(key, '"a": {"command": "x", "command": "y"}'),
        "odd numbers": _mcp(
            key,
            '"a": {"command": "x", "timeout": 1e400, "n": -0.0, "m": 1E+2, '
            '"big": 123456789012345678901234567890}',
        ),
        "a number of 5000 digits": _mcp(key, '"a": {"command": "x", "n": ' + "7" * 5000 + "}"),
        "a lone surrogate": _mcp(key, '"a": {"command": "\\udc80", "env": {"K": "\\ud83d"}}'),
        "escapes and unicode": _mcp(
            key, '"a": {"command": "caf\\u00e9 \\/ \\" é 🚀", "args": ["\\t", "\\u202e"]}'
        ),
        "a token in env": _mcp(key, '"gh": {"command": "gh", "env": {"GITHUB_TOKEN": "ghp_x"}}'),
        "the user's own tiermem entry": _mcp(
            key, '"tiermem": {"command": "/opt/tm/bin/tiermem", "args": ["serve", "-v"]}'
        ),
        "booleans and nulls": _mcp(key, '"a": {"command": "x", "disabled": false, "cwd": null}'),
        "nested arrays": _mcp(key, '"a": {"command": "x", "args": [[1, [2, []]], {}]}'),
        "inputs after servers": _mcp(key, plain, tail=',\n  "inputs": [{"id": "t"}]'),
    }
    texts["CRLF"] = texts["squad's own"].replace("\n", "\r\n")
    texts["CRLF with comments"] = texts["comments everywhere"].replace("\n", "\r\n")
    texts["CRLF, empty servers"] = texts["empty servers on one line"].replace("\n", "\r\n")
    return texts


def _insert_after(anchor: str, added: str) -> Edit:
    """An edit that adds text after the first `anchor` (one the user's file holds)."""
    return lambda text: text.replace(anchor, anchor + added, 1)


# What users change after the install, and what their file then holds without tiermem.
MCP_EDITS: dict[str, tuple[str, Edit]] = {
    "a comment added at the top": ("{\n", _insert_after("{\n", "  // added later\n")),
    "a value changed from 1 to true": ('"n": 1', lambda t: t.replace('"n": 1', '"n": true')),
    "a server added after tiermem's": (
        '"a": {"command": "x"}',
        _insert_after('"a": {"command": "x"}', ',\n    "late": {"command": "z"}'),
    ),
    "a key added to the file": ('"inputs": []', lambda t: t.replace('"inputs": []', '"x": 1')),
}


def mcp_cases(rel: str) -> list[Case]:
    """Every hand-made text of one MCP file, and each edit after install (LF and CRLF)."""
    key = "mcpServers" if rel == installer.MCP_JSON else "servers"
    found = [Case(name, text) for name, text in _mcp_texts(key).items()]
    edited = _mcp(key, '"a": {"command": "x"},\n"b": {"command": "y", "n": 1}')
    edited = edited.replace("\n}\n", ',\n  "inputs": []\n}\n')
    for name, (anchor, edit) in MCP_EDITS.items():
        assert anchor in edited, name
        found.append(Case(name, edited, edit, edit))

        def crlf_edit(text: str, edit: Edit = edit) -> str:
            return edit(text.replace("\r\n", "\n")).replace("\n", "\r\n")

        found.append(Case(name + ", CRLF", edited.replace("\n", "\r\n"), crlf_edit, crlf_edit))
    return found


MCP_FILES = (installer.MCP_JSON, installer.VSCODE_MCP)
# Each team holds one case of each MCP file.
MCP_TEAMS = list(zip(*(mcp_cases(rel) for rel in MCP_FILES), strict=True))


def test_every_mcp_file_comes_back_byte_for_byte(
    tmp_path: Path, team: Path, run_cli: RunCli
) -> None:
    changed, added, files = [], 0, 0
    for n, cases in enumerate(MCP_TEAMS):
        root = make_team(tmp_path / f"case-{n}", vscode=True)
        for rel, case in zip(MCP_FILES, cases, strict=True):
            (root / rel).write_bytes(case.text.encode("utf-8"))
        out = run(run_cli, root)
        for rel, case in zip(MCP_FILES, cases, strict=True):
            files += 1
            added += states(out)[rel] == "added"
            assert states(out)[rel] in ("added", "edited"), (rel, case.name, out)
            installed = (root / rel).read_bytes().decode("utf-8")
            (root / rel).write_bytes(case.edit(installed).encode("utf-8"))
        run(run_cli, root, "--uninstall")
        for rel, case in zip(MCP_FILES, cases, strict=True):
            if (root / rel).read_bytes() != case.expected(case.text).encode("utf-8"):
                changed.append(f"{rel}: {case.name}")
    assert files >= 50
    assert added == files - 2  # all but the two with the user's own tiermem entry
    assert changed == []


# --- what the issue named, one by one ---------------------------------------------------------


def _install(run_cli: RunCli, team: Path, rel: str, text: str) -> str:
    (team / rel).write_bytes(text.encode("utf-8"))
    out = run(run_cli, team)
    assert states(out)[rel] == "added", out
    return (team / rel).read_bytes().decode("utf-8")


def test_a_comment_added_after_the_install_stays(team: Path, run_cli: RunCli) -> None:
    rel = installer.VSCODE_MCP
    installed = _install(run_cli, team, rel, _mcp("servers", '"a": {"command": "x"}'))
    (team / rel).write_text(installed.replace('"a"', '// keep me\n    "a"'), "utf-8")
    run(run_cli, team, "--uninstall")
    assert (team / rel).read_text("utf-8") == _mcp("servers", '// keep me\n"a": {"command": "x"}')


def test_a_value_edited_from_1_to_true_stays_true(team: Path, run_cli: RunCli) -> None:
    rel = installer.MCP_JSON
    installed = _install(run_cli, team, rel, _mcp("mcpServers", '"a": {"command": "x", "n": 1}'))
    (team / rel).write_text(installed.replace('"n": 1', '"n": true'), "utf-8")
    run(run_cli, team, "--uninstall")
    assert (team / rel).read_text("utf-8") == _mcp("mcpServers", '"a": {"command": "x", "n": true}')


def test_a_users_own_entry_before_an_install_shaped_one_is_kept(
    team: Path, run_cli: RunCli
) -> None:
    rel = installer.MCP_JSON
    users = '"tiermem": {"command": "/opt/tm/bin/tiermem", "args": ["serve", "-v"]}'
    shaped = '"tiermem": {"command": "tiermem", "args": ["serve"], "env": {}, "tools": ["*"]}'
    text = _mcp("mcpServers", f"{users},\n{shaped}")
    (team / rel).write_text(text, "utf-8")
    assert states(run(run_cli, team))[rel] == "unchanged"
    run(run_cli, team, "--uninstall")
    assert (team / rel).read_text("utf-8") == _mcp("mcpServers", users)


def test_a_name_twice_in_a_plain_file_keeps_both_objects(team: Path, run_cli: RunCli) -> None:
    rel = installer.MCP_JSON
    text = _mcp("mcpServers", '"a": {"command": "first"},\n"a": {"command": "second"}')
    installed = _install(run_cli, team, rel, text)
    assert '"command": "first"' in installed and '"command": "second"' in installed
    run(run_cli, team, "--uninstall")
    assert (team / rel).read_text("utf-8") == text


def test_a_name_twice_anywhere_leaves_a_record_uninstall_reads(team: Path, run_cli: RunCli) -> None:
    rel = installer.MCP_JSON
    text = '{"mcpServers": {}, "mcpServers": {"a": {"command": "x"}}, "x": {"k": 1, "k": 2}}\n'
    _install(run_cli, team, rel, text)
    assert run_cli("squad", "install", "--check", "--root", str(team))[0] == 0
    run(run_cli, team, "--uninstall")
    assert (team / rel).read_text("utf-8") == text


def test_numbers_keep_their_spelling(team: Path, run_cli: RunCli) -> None:
    rel = installer.MCP_JSON
    text = _mcp("mcpServers", '"a": {"command": "x", "timeout": 1e400, "n": 1.50}')
    installed = _install(run_cli, team, rel, text)
    assert "1e400" in installed and "Infinity" not in installed and "1.50" in installed
    run(run_cli, team, "--uninstall")
    assert (team / rel).read_text("utf-8") == text


def test_a_lone_surrogate_is_kept_as_written(team: Path, run_cli: RunCli) -> None:
    rel = installer.MCP_JSON
    text = _mcp("mcpServers", '"a": {"command": "\\udc80"}')
    installed = _install(run_cli, team, rel, text)
    assert '"\\udc80"' in installed
    run(run_cli, team, "--uninstall")
    assert (team / rel).read_text("utf-8") == text


def test_a_crlf_editor_file_gets_crlf_lines(team: Path, run_cli: RunCli) -> None:
    rel = installer.VSCODE_MCP
    text = _mcp("servers", '"a": {"command": "x"}', eol="\r\n")
    _install(run_cli, team, rel, text)
    data = (team / rel).read_bytes()
    assert b'"tiermem"' in data
    assert data.count(b"\n") == data.count(b"\r\n")
    run(run_cli, team, "--uninstall")
    assert (team / rel).read_bytes() == text.encode()


def test_an_edit_that_would_change_the_rest_is_refused_in_one_line(
    team: Path, run_cli: RunCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each edit is read back before anything is written; one that would change anything
    but tiermem's entry (here, a splice put in the wrong place) is refused in one line."""
    from tiermem.squad.install import jsonc

    real = jsonc.Insertion.applied
    monkeypatch.setattr(jsonc.Insertion, "applied", lambda self, text: real(self, text)[:-2])
    before = (team / installer.MCP_JSON).read_bytes()
    code, out, err = run_cli("squad", "install", "--root", str(team))
    assert (code, out) == (2, "") and err.count("\n") == 1
    assert "cannot be added without changing the rest of the file" in err
    assert (team / installer.MCP_JSON).read_bytes() == before
    assert not (team / installer.MANIFEST).exists()


# --- charters and Squad's instruction files ---------------------------------------------------

CHARTER = "# Ralph\n\n## How I Work\n\n- Ship it.\n"
LINE = "- Read decisions.md before starting"
TYPED = "- A line I typed where the blank line was"


def _typed_in_blank(text: str) -> str:
    """The user types a line where the blank line before tiermem's section is."""
    at = text.index("<!-- tiermem:begin memory")
    assert text[at - 2 : at] == "\n\n", text[at - 8 : at]
    return text[: at - 1] + TYPED + "\n" + text[at:]


def _blank_removed(text: str) -> str:
    at = text.index("<!-- tiermem:begin memory")
    return text[: at - 1] + text[at:]


def _appended(text: str) -> str:
    return text + "## Added after the install\n"


CHARTER_CASES = [
    Case("plain", CHARTER),
    Case("no final newline", CHARTER.rstrip("\n")),
    Case("CRLF", CHARTER.replace("\n", "\r\n")),
    Case("CRLF, no final newline", CHARTER.rstrip("\n").replace("\n", "\r\n")),
    Case("ends in blank lines", CHARTER + "\n\n"),
    Case("ends in a line of blanks", CHARTER + "   "),
    Case("empty", ""),
    Case("one newline", "\n"),
    Case("mixed line ends", "# Ralph\r\n\n- Ship it.\r\n"),
    Case(
        "a look-alike section",
        CHARTER + "\n<!-- tiermem:begin memory -->\nMine.\n<!-- tiermem:end memory -->\n",
    ),
    Case("a begin marker with no end", CHARTER + "\n<!-- tiermem:begin memory -->\nquoted\n"),
    Case("Squad's line", CHARTER + LINE + "\n"),
    Case("Squad's line, CRLF", (CHARTER + LINE + "\n").replace("\n", "\r\n")),
    Case("Squad's line, last, no newline", CHARTER + LINE),
    Case("unicode", "# Ralph\n\nÉquipe 🚀 \u202e\u200b ‮rtl‬\n"),
    Case(
        "a line typed in place of the blank", CHARTER, _typed_in_blank, lambda t: t + TYPED + "\n"
    ),
    Case(
        "a line typed in place of the blank, no final newline",
        CHARTER.rstrip("\n"),
        _typed_in_blank,
        lambda t: t + "\n" + TYPED + "\n",
    ),
    Case(
        "a line typed in place of the blank, CRLF",
        CHARTER.replace("\n", "\r\n"),
        lambda t: _typed_in_blank(t.replace("\r\n", "\n")).replace("\n", "\r\n"),
        lambda t: t + TYPED + "\r\n",
    ),
    Case(
        "a line typed in place of the blank, text after",
        CHARTER,
        lambda t: _appended(_typed_in_blank(t)),
        lambda t: t + TYPED + "\n" + "## Added after the install\n",
    ),
    Case("the blank line removed", CHARTER, _blank_removed),
    Case("a section appended after", CHARTER, _appended, _appended),
    Case(
        "a line added at the top",
        CHARTER,
        lambda t: "<!-- mine -->\n" + t,
        lambda t: "<!-- mine -->\n" + t,
    ),
    Case(
        "the user's own line changed",
        CHARTER,
        lambda t: t.replace("Ship it", "Ship it now"),
        lambda t: t.replace("Ship it", "Ship it now"),
    ),
]

INSTRUCTION = (
    "# Template\n\n## Collaboration\n\n"
    "Before starting work, read `.squad/decisions.md` for team decisions that affect me.\n"
    "- Read project context and team decisions before starting work\n"
)
INSTRUCTION_CASES = [
    Case("plain", INSTRUCTION),
    Case("CRLF", INSTRUCTION.replace("\n", "\r\n")),
    Case("no final newline", INSTRUCTION.rstrip("\n")),
    Case("indented", INSTRUCTION.replace("Before", "   Before").replace("- Read", "\t- Read")),
    Case("twice", INSTRUCTION + INSTRUCTION),
    Case("mixed line ends", INSTRUCTION.replace("\n", "\r\n", 3)),
    Case(
        "with the user's own line about decisions.md",
        INSTRUCTION + "- We read decisions.md on Fridays.\n",
    ),
    Case(
        "a line added above tiermem's",
        INSTRUCTION,
        lambda t: t.replace("- Read", "- Mine\n- Read"),
        lambda t: t.replace("- Read", "- Mine\n- Read"),
    ),
    Case(
        "a line added below tiermem's, CRLF",
        INSTRUCTION.replace("\n", "\r\n"),
        lambda t: t + "- Also mine\r\n",
        lambda t: t + "- Also mine\r\n",
    ),
    Case("unicode around it", "# Équipe 🚀\n" + INSTRUCTION + "‮ fin\n"),
]


def test_every_charter_and_instruction_comes_back_byte_for_byte(
    team: Path, run_cli: RunCli
) -> None:
    charters = {f".squad/agents/case{n:02d}/charter.md": c for n, c in enumerate(CHARTER_CASES)}
    templates = {f".squad/templates/case{n:02d}.md": c for n, c in enumerate(INSTRUCTION_CASES)}
    cases = {**charters, **templates}
    for rel, case in cases.items():
        (team / rel).parent.mkdir(parents=True, exist_ok=True)
        (team / rel).write_bytes(case.text.encode("utf-8"))
    found = states(run(run_cli, team, "--coordinator"))
    for rel, case in cases.items():
        data = (team / rel).read_bytes().decode("utf-8")
        assert "tiermem" in data, (rel, case.name, found.get(rel))
        (team / rel).write_bytes(case.edit(data).encode("utf-8"))
    run(run_cli, team, "--uninstall")
    changed = [
        f"{rel}: {case.name}"
        for rel, case in cases.items()
        if (team / rel).read_bytes() != case.expected(case.text).encode("utf-8")
    ]
    assert len(cases) >= 30
    assert changed == []


def test_a_line_typed_above_the_section_is_not_joined_to_the_next(
    team: Path, run_cli: RunCli
) -> None:
    rel = ".squad/agents/ralph/charter.md"
    text = (team / rel).read_text("utf-8")
    run(run_cli, team)
    installed = _typed_in_blank((team / rel).read_text("utf-8"))
    (team / rel).write_text(installed + "## Mine, after\n", "utf-8")
    run(run_cli, team, "--uninstall")
    assert (team / rel).read_text("utf-8") == text + TYPED + "\n## Mine, after\n"
    assert install_texts.MEMORY_END not in (team / rel).read_text("utf-8")


def test_an_older_entry_is_brought_up_to_date_where_it_stands(
    team: Path, run_cli: RunCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An entry an install wrote with this Python's module becomes the `tiermem` on PATH,
    in place; the uninstall after it gives back the file."""
    import sys

    rel = installer.VSCODE_MCP
    text = "{\n  // mine\n" + _mcp("servers", '"a": {"command": "x"}')[2:]
    (team / rel).write_text(text, "utf-8")
    path = os.environ["PATH"]
    monkeypatch.setenv("PATH", "/nonexistent")
    run(run_cli, team)
    assert sys.executable in (team / rel).read_text("utf-8")
    monkeypatch.setenv("PATH", path)
    assert states(run(run_cli, team))[rel] == "updated"
    assert sys.executable not in (team / rel).read_text("utf-8")
    run(run_cli, team, "--uninstall")
    assert (team / rel).read_text("utf-8") == text


JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)


@settings(max_examples=150, deadline=None)
@given(
    servers=st.dictionaries(st.text(min_size=1, max_size=6), JSON, max_size=3),
    indent=st.sampled_from([None, 0, 2, 4, "\t"]),
    crlf=st.booleans(),
)
def test_an_entry_spliced_into_any_json_comes_out_byte_for_byte(
    servers: dict[str, object], indent: int | str | None, crlf: bool
) -> None:
    from tiermem.squad.install import jsonc

    text = json.dumps({"x": [1], "mcpServers": servers}, indent=indent, ensure_ascii=False)
    text = text.replace("\n", "\r\n") if crlf else text
    root = jsonc.parse(text)
    servers_node = jsonc.members(root, "mcpServers")[-1].value
    entry = {"command": "tiermem", "args": ["serve"]}
    made = jsonc.insertion(text, servers_node, "tiermem", entry)
    after = made.applied(text)
    assert jsonc.loads(after)["mcpServers"] == {"tiermem": entry, **servers}
    placed = jsonc.members(jsonc.members(jsonc.parse(after), "mcpServers")[-1].value, "tiermem")[0]
    assert jsonc.cut(after, placed, made.lead, made.trail) == text
    grown = jsonc.parse(after)
    node = jsonc.members(grown, "mcpServers")[-1].value
    alone = jsonc.without(after, node, jsonc.members(node, "tiermem")[0])
    assert jsonc.parse(alone).shape() == root.shape()
