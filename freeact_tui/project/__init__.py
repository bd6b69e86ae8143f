"""The project and the user: app directories (``paths``), the config and its layered sources
(``config``, ``sources``), folder trust (``trust``, ``review``, ``policy``, ``env_policy``), a trusted
project's ``.env`` as a frozen mapping never written to ``os.environ`` (``project_env``), a
freeact ``.freeact/`` folder (``freeact_dir``), skills, the one reader of a project's files
(``files``) and the app's own writes into it (``own_writes``). The public face is ``config.load_config``.
"""
