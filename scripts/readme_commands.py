"""Write the README's command table from the command line's parser (`tiermem.cli.parser.reference`).

    python scripts/readme_commands.py          # rewrite the table in README.md
    python scripts/readme_commands.py --check  # exit 1 when README.md differs from the parser

The table stands between the `<!-- commands -->` and `<!-- /commands -->` lines; the test
suite fails when it is not what this writes (tests/test_readme_commands.py).
"""

from __future__ import annotations

import sys
from pathlib import Path

from tiermem.cli.parser import reference

README = Path(__file__).resolve().parent.parent / "README.md"
START, END = "<!-- commands -->\n", "<!-- /commands -->\n"


def with_table(text: str) -> str:
    """The README's text with its command table made anew from the parser."""
    head, _, rest = text.partition(START)
    _, _, tail = rest.partition(END)
    return head + START + "\n".join(reference()) + "\n" + END + tail


def main(argv: list[str]) -> int:
    text = README.read_text(encoding="utf-8")
    made = with_table(text)
    if "--check" in argv:
        return 0 if made == text else 1
    README.write_text(made, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
