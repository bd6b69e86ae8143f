"""Kernels in a remote, already running Jupyter (Enterprise) Gateway: ``remote.RemoteExecutor``, where
the gateway is (``endpoint``), approvals over the kernel's stdin (``inband``) and release on exit.
"""
