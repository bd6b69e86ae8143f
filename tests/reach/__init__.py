"""Tests of ``freeact_tui/reach/`` (see ``tests/__init__.py``).
"""
