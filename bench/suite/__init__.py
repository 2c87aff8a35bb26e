"""The pieces of bench/run.py: one module per benchmark, plus shared helpers."""
