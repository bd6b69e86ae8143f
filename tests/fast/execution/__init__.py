"""Kernel message handling that needs no kernel.
"""
