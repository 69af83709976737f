"""torch.backends: the flags scripts set for reproducibility and the availability checks they branch on, as 1.13
answers them on a CPU-only build (tinyddp's engine has no cuDNN, MPS or CUDA in Python; the flags are kept and
read back, and change nothing). cudnn, mps and cuda are imported with the package, as 1.13's."""
from tinyddp.backends import cuda, cudnn, mps  # noqa: F401
