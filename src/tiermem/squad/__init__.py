"""Everything that knows Squad's `.squad/` layout, by subsystem: the host adapter the Context
carries (`adapter/`), Squad's markdown read into sections (`reading/`), `import squad`
(`importer/`) and `squad install` (`install/`). It may import every part of the core; only
`memory`, the command line and the benchmarks import it.
"""
