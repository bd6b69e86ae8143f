"""Tests of ``freeact_tui/store/`` (see ``tests/__init__.py``).
"""
