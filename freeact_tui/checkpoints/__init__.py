"""Checkpoints of the working directory before each approved action that can write, and undo, rewind
and diff over them. The public face is ``checkpointing.Checkpointing`` (the agent and the TUI call
only it); ``engine`` stores states in a shadow git repository, ``records``/``limits`` are its data.
"""
