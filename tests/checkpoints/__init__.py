"""Tests of ``freeact_tui/checkpoints/`` (see ``tests/__init__.py``).
"""
