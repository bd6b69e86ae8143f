"""Tests of the shared modules at ``freeact_tui``'s root (git runs, typed-ahead keys).
"""
