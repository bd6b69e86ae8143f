"""The fast tier: tests that start no kernel, no process and no pty (``tests/fast/conftest.py``
fails a test that does). ``python -m pytest -q tests/fast`` gives feedback in seconds.
"""
