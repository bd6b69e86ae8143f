"""Tests of ``freeact_tui/shell/`` (see ``tests/__init__.py``).
"""
