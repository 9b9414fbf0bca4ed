"""Patchwork token-sensor firmware logic.

Plain Python that runs unchanged on CircuitPython (Raspberry Pi Pico) and on
CPython (for the tests): no dataclasses, no typing at runtime, no f-strings,
no big integers in the scan loop. Board I/O lives only in ``code.py``.
"""
