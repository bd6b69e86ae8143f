"""Tests of ``freeact_tui/execution/`` (see ``tests/__init__.py``).
"""
