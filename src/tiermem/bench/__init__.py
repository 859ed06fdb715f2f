"""`tiermem bench ...`: key facts, corpus replays, probes and their baselines, speed and
LoCoMo. It registers its own commands (`commands.register`) and may import every part;
only the command line imports it.
"""
