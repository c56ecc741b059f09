"""Benchmark harness for bore-samplers (not part of the installed package).

Run the scripts from the repository root, e.g. ``python -m benchmarks.run_benchmark`` and
``python -m benchmarks.latency``; see ``benchmarks/README.md``.
"""
