"""How far an action or a rule reaches: where a path word really leads (``resolve``), which paths an
action names outside the working directory (``named_paths``), path globs (``globs``), the secrets a
recursive search reads (``search``) and how broad a rule pattern is (``breadth``). Pure functions.
"""
