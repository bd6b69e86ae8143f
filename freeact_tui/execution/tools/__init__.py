"""The tool server the kernel calls MCP tools through (``server``), its link to the kernel (``link``),
which tools a kernel may call (``allowlist``) and the MCP sessions behind them (``mcp_session``).
"""
