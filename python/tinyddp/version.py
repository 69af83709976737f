"""torch.version: the values of the PyTorch tinyddp reproduces, the build its goldens come from (Debian's
python3-torch 1.13.1, which reports 1.13.0a0; no CUDA, no ROCm)."""
__version__ = '1.13.0a0'
debug = False
cuda = None
git_version = 'Unknown'
hip = None
