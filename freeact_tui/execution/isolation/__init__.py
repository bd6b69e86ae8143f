"""Isolated executors: the bubblewrap sandbox (``sandbox``, ``bridge``, ``protect``) and docker
(``docker``, ``docker_image``); both run the local kernel inside their walls.
"""
