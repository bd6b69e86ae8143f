"""freeact 0.11's ``freeact.tools.pytools``: where generated (``mcptools``) and saved (``gentools``) tools live."""

MCPTOOLS_DIR = "mcptools"
GENTOOLS_DIR = "gentools"
