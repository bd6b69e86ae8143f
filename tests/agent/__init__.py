"""Tests of ``freeact_tui/agent/`` (see ``tests/__init__.py``).
"""
