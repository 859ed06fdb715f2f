"""`tiermem bench ...`: key facts, corpus replays, probes and their baselines, speed and
LoCoMo. It registers its own commands (`arguments.register`; their runners are in `runners`)
and may import every part; only the command line imports it.
"""
