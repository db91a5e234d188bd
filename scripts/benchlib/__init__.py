"""Shared by the benchmark scripts (scripts/bench-e2e): the system under test and the measuring helpers."""
