"""Scribe, the memory keeper: session ends, checkpoints, summaries and maintenance."""
