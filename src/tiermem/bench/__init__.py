"""`tiermem bench ...`: its commands (`arguments`, each registered by `arguments.register`)
and their runners (`runners`). The replay of a team's memory (`corpus`, `replay`, `imported`,
`full`: every corpus at once) and what is measured of it: the probes and their baselines
(`probes`, `evaluate`, `oracle`, `line_packer`), the forward probes (`forward`), key facts and
their reading in prose (`facts`, `carried_in_prose`), Scribe's quality (`quality`), an
import's filing and shape (`import_quality`, `shape`, `import_scale`), and LoCoMo
(`locomo`, `locomo_data`). Speed: the generated stores (`generated`), their figures
(`speed`, `headline`, `write_speed`, `hot_writes`, `fresh_clone`, `mcp_speed`) and what
start-up costs (`startup`). It may import every part; only the command line imports it.
"""
