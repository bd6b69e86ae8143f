"""Tests of ``freeact_tui/acp/`` (see ``tests/__init__.py``).
"""
