"""Key facts for the benchmarks: the same rules the summarizer keeps (see tiermem.text.facts)."""

from ..text.facts import coverage, coverages, key_facts, present_facts, retention

__all__ = ["coverage", "coverages", "key_facts", "present_facts", "retention"]
