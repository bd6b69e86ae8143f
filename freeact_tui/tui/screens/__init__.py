"""Screens of the app, one a module with its ``.tcss``: main (the chat), the approval dialog and its
controller (the queue of waiting requests), help, first run, confirm. May import widgets, ``agent``
(events only through the stream), ``store`` and the shared modules.
"""
