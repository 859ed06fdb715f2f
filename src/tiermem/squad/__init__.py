"""Everything that knows Squad's `.squad/` layout: its files, how to read them, `squad install`,
`import squad` (`importer`, `import_sections`) and the `Host` the Context carries (`host`).
It may import every part of the core; only `memory`, the command line and the benchmarks
import it.
"""
