"""Tests of ``freeact_tui/effects/`` (see ``tests/__init__.py``).
"""
