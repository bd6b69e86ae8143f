"""Tests of ``freeact_tui/text/`` (see ``tests/__init__.py``).
"""
