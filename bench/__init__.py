"""Benchmarks: `python -m bench.<name>`; they print tables, and tests run them in smoke mode."""
