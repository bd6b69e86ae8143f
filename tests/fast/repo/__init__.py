"""The repository's own rules that need no process (module size).
"""
