"""Tests of ``freeact_tui/project/`` (see ``tests/__init__.py``).
"""
