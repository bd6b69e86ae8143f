"""Tests of ``freeact_tui/actions/`` (see ``tests/__init__.py``).
"""
