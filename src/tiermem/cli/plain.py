"""Command lines read without argparse: the commands users run most, written plainly.

Importing argparse and building a command's parser took a tenth of a `tiermem hot show`. A
line in one of the `Form`s below (its words, then its positionals and options in any order,
each option once and written out whole, no value that starts with `-`) gives here the values
argparse would give; any other line, and every line that asks for help or holds a mistake,
is left to argparse (None), so help, errors and everything unusual stay argparse's own.
`tests/test_plain.py` holds the two the same.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

TYPE_CHECKING = False
if TYPE_CHECKING:
    from argparse import Namespace
else:  # what argparse's holds (attributes, `vars`), without importing argparse
    from types import SimpleNamespace as Namespace

ANY = ()  # an option that takes any value (that argparse would not read as an option)
INT = "int"  # an option that takes a whole number
SWITCH = None  # an option that takes no value: True when given
Takes = tuple[str, ...] | str | None  # what an option takes: ANY, INT, SWITCH or its choices
# The options every parser takes, at every level of a command line; absent when not given.
EVERYWHERE = ("--root", "--now")


class Form:
    """A command line that can be read plainly: the words naming the command (and where
    argparse keeps each), its positionals (a last one named `name...` takes every word
    left, as a list), its options (each ANY, INT, SWITCH or a tuple of the values it takes)
    and the handler it runs."""

    __slots__ = ("given_defaults", "handler", "options", "positionals", "words")

    def __init__(
        self,
        words: Mapping[str, str],
        positionals: Sequence[str],
        options: Mapping[str, Takes],
        handler: Callable[[Namespace], int],
        defaults: Mapping[str, object] | None = None,
    ) -> None:
        self.words, self.positionals, self.options = dict(words), tuple(positionals), options
        self.handler = handler
        self.given_defaults = dict(defaults or {})  # of the options not None (a switch: False)

    def defaults(self) -> dict[str, object]:
        """What argparse holds for each option the line does not give."""
        found: dict[str, object] = {}
        for option, takes in self.options.items():
            dest = option[2:].replace("-", "_")
            found[dest] = False if takes is SWITCH else self.given_defaults.get(option)
        return found


def parse(argv: Sequence[str], forms: Mapping[tuple[str, ...], Form]) -> Namespace | None:
    """The arguments of a line in one of `forms`, as argparse would hold them, or None."""
    split = _split(argv, forms)
    if split is None:
        return None
    words, given, breaks = split
    for size in (2, 1):
        form = forms.get(tuple(words[:size]))
        if form is not None:
            early = any(0 <= b < size for b in breaks)
            spots = [(b if b >= 0 else -b - 1) - size for b in breaks]
            return _read(form, words[size:], given, early, spots)
    return None


def _split(
    argv: Sequence[str], forms: Mapping[tuple[str, ...], Form]
) -> tuple[list[str], dict[str, str | None], list[int]] | None:
    """The line's positionals, its options with their values, and how many positionals came
    before each option (negative, less one, for --root and --now, which any command takes
    anywhere); None if it is not plain."""
    words: list[str] = []
    given: dict[str, str | None] = {}
    breaks: list[int] = []
    valued, switches = _known(forms)
    tokens = iter(argv)
    for token in tokens:
        if not token.startswith("-") or token == "-":
            words.append(token)
            continue
        if token in given or token not in valued | switches:
            return None  # help, an abbreviation, `--opt=value`, `--`, twice...: argparse's
        value = next(tokens, None) if token in valued else None
        if token in valued and (value is None or (value.startswith("-") and value != "")):
            return None
        given[token] = value
        breaks.append(len(words) if token not in EVERYWHERE else -len(words) - 1)
    return words, given, breaks


def _known(forms: Mapping[tuple[str, ...], Form]) -> tuple[set[str], set[str]]:
    """The options any form takes with a value, and those it takes alone."""
    valued, switches = set(EVERYWHERE), set[str]()
    for form in forms.values():
        for option, takes in form.options.items():
            (switches if takes is SWITCH else valued).add(option)
    return valued, switches


def _read(
    form: Form, rest: list[str], given: dict[str, str | None], early: bool, breaks: list[int]
) -> Namespace | None:
    """The values of a line in this form, or None when argparse would refuse it."""
    given_positionals = _positionals(form.positionals, rest, breaks)
    if early or given_positionals is None:
        return None  # an option before the command that takes it, a positional too many...
    values: dict[str, object] = {"version": None, **form.words, "handler": form.handler}
    values |= given_positionals | form.defaults()
    for option, value in given.items():
        dest = option[2:].replace("-", "_")
        if option in EVERYWHERE:
            values[dest] = value
            continue
        if option not in form.options:
            return None
        read = _value(form.options[option], value)
        if read is None:
            return None
        values[dest] = read
    return Namespace(**values)


def _positionals(
    names: Sequence[str], rest: list[str], breaks: list[int]
) -> dict[str, object] | None:
    """The positionals' values, as argparse holds them; None when their number is wrong, or
    an option splits the words a last `name...` takes (argparse takes one run of them)."""
    if names and names[-1].endswith("..."):
        fixed = len(names) - 1
        if len(rest) <= fixed or any(fixed < b < len(rest) for b in breaks):
            return None
        return {**dict(zip(names[:fixed], rest, strict=False)), names[-1][:-3]: rest[fixed:]}
    if len(rest) != len(names):
        return None
    return dict(zip(names, rest, strict=True))


def _value(takes: Takes, value: str | None) -> object:
    """An option's value as argparse holds it, or None when argparse would refuse it."""
    if takes is SWITCH:
        return True
    assert value is not None
    if takes == INT:
        return int(value) if value.isascii() and value.isdigit() else None
    if takes == ANY or value in takes:
        return value
    return None
