"""freeact 0.11's ``freeact.tools`` names that SDK code uses (``pytools.apigen.generate_mcp_sources``)."""
