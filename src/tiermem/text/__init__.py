"""Text with no store behind it: what a word is, once for everything that ranks (`words`),
prose a reader can act on (`prose`), Markdown sections and front matter (`markdown`), the key
facts of a passage, its paths, commands and names (`facts`), credentials found and masked
(`redact`, built on the public names of `secret_shapes` and `secret_judges`), and how memory
and its metadata are shown in a terminal, a prompt or JSON (`shown`). It owns the rules for
reading plain text and nothing else; it may import only the standard library and `errors`.
"""
