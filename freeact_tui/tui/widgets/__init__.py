"""Widgets, one a module: the conversation log and its blocks, the prompt, status bar, side panel,
session and subagent lists, image previews. They know events and the store's records, never the agent.
"""
