"""Benchmark harness: key facts, corpus replay streams, probes and baselines."""
