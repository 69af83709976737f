"""torch.backends.mps: no Metal device (1.13 on Linux)."""


def is_built():
    return False


def is_available():
    return False
