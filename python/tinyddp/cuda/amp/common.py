def amp_definitely_not_available():
    """True: tinyddp has no CUDA (1.13: neither CUDA nor torch_xla available)."""
    from tinyddp import cuda
    return not cuda.is_available()
