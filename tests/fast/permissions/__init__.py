"""Tests of ``freeact_tui/permissions/`` (see ``tests/__init__.py``).
"""
