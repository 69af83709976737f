"""torch.nn.PairwiseDistance over F.pairwise_distance (CosineSimilarity lives in activation.py)."""
from tinyddp.nn import functional as F
from tinyddp.nn.modules.module import Module


class PairwiseDistance(Module):
    def __init__(self, p=2.0, eps=1e-6, keepdim=False):
        super().__init__()
        self.norm, self.eps, self.keepdim = p, eps, keepdim

    def forward(self, x1, x2):
        return F.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)
