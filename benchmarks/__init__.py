"""Benchmarks of bore-samplers (not part of the installed package).

``python -m benchmarks list`` names the declared benchmarks, ``python -m benchmarks run NAME``
runs one; see ``benchmarks/README.md``.
"""
