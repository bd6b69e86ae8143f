"""The local ipybox kernel: the executor (``executor.KernelExecutor``), its Jupyter Kernel Gateway
process (``gateway_process``, ``spare_gateway``), the client, the code run at start and the pool of
subagent kernels.
"""
