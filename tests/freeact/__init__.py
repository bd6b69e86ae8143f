"""Tests of ``freeact_tui/freeact/`` (see ``tests/__init__.py``).
"""
