"""The repository's own rules (imports, module size) and the fake model server of the tests.
"""
