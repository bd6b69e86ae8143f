"""Shell parsing without a shell: the words of a command line (``words``), the programs it runs and
what they read (``programs``, ``options``, ``gitreads``). Pure functions, no imports of the app.
"""
