"""The tests, one folder per package of ``freeact_tui``; ``tests/fast/`` needs no kernel or process.
"""
