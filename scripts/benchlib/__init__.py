"""Shared by the benchmark scripts (bench-e2e, bench-cpu): the system under test, the purchases, the measuring helpers."""
