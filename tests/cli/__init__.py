"""Tests of ``freeact_tui/cli/`` (see ``tests/__init__.py``).
"""
