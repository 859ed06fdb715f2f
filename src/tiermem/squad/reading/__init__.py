"""Squad's markdown as tiermem reads it: histories, decisions, the inbox and logs cut into
byte-exact sections (`squad_markdown`), the dates of their headings (`heading_dates`) and
decision blocks as team entries (`decision_blocks`). It may import the core; the adapter and
the importer import it.
"""
