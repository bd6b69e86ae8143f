"""Tests of ``freeact_tui/tui/`` (see ``tests/__init__.py``).
"""
