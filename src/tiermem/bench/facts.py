"""Key facts for the benchmarks: the same rules the summarizer keeps (see tiermem.facts)."""

from ..facts import coverage, coverages, key_facts, present_facts, retention

__all__ = ["coverage", "coverages", "key_facts", "present_facts", "retention"]
