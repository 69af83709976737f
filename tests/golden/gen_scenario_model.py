"""The scenario model of ../shared/DESIGN.md (models/) in PyTorch, for the generators that run it
(gen_ddp_scenarios.py, gen_ddp_patterns.py, gen_ddp_buckets.py). Imports torch: only generators import this
module. The forward flags are the plan language's (`tinyddp repro --help`, `forward(FLAG, ...)`)."""
import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint


class ScenarioModel(nn.Module):
    """trunk -> head_a (task a), head_b (task b), text_decoder (task t); parameter indices 0..9 in this order,
    after `unused_scale` (index 0) when extra_unused is set. With buffer, a buffer `feature_scale` (ones(8),
    registered after the submodules) scales the trunk features: x * 1 is exact, so values are unchanged."""

    def __init__(self, extra_unused=False, buffer=False):
        super().__init__()
        if extra_unused:
            self.unused_scale = nn.Parameter(torch.ones(1))
        self.trunk = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 8))
        self.head_a = nn.Linear(8, 1)
        self.head_b = nn.Linear(8, 3)
        self.text_decoder = nn.Linear(8, 5)
        if buffer:
            self.register_buffer("feature_scale", torch.ones(8))

    def _trunk2(self, h, ckpt):
        """trunk.2 on h, under checkpoint when ckpt is "ckpt" (use_reentrant=True, 1.13's default) or
        "ckpt_nr" (use_reentrant=False)."""
        if ckpt == "ckpt":
            return checkpoint(self.trunk[2], h)
        if ckpt == "ckpt_nr":
            return checkpoint(self.trunk[2], h, use_reentrant=False)
        return self.trunk[2](h)

    def features(self, x, ckpt=None, reuse=False):
        """The trunk features: trunk.2(relu(trunk.0(x))), with reuse trunk.2 applied twice (shared weights,
        each application checkpointed separately), times feature_scale when the buffer exists."""
        if ckpt is None and not reuse:
            h = self.trunk(x)
        else:
            h = self._trunk2(self.trunk[1](self.trunk[0](x)), ckpt)
            if reuse:
                h = self._trunk2(self.trunk[1](h), ckpt)
        if hasattr(self, "feature_scale"):
            h = h * self.feature_scale
        return h

    def forward(self, x, mode="full", ckpt=None, reuse=False, features=False):
        """mode: the plan language's text modes: full, detach (head_b and text_decoder read
        features(x).detach()), no_text (the text decoder is not called), drop_text (it runs, its output is
        not returned). ckpt: None, "ckpt" or "ckpt_nr"; reuse: trunk.2 twice; features: the trunk features
        are returned as the last output."""
        h = self.features(x, ckpt, reuse)
        if mode == "detach":
            hd = h.detach()
            out = (self.head_a(h), self.head_b(hd), self.text_decoder(hd))
        else:
            out = (self.head_a(h), self.head_b(h))
            if mode != "no_text":
                t = self.text_decoder(h)
                if mode != "drop_text":
                    out = out + (t,)
        return out + (h,) if features else out


def discriminator():
    """The GAN discriminator of option gan (PLAN_SPEC.md's ADDENDUM): it scores text outputs or targets (5
    features) as real (1) or fake (0); parameters disc.0.weight, disc.0.bias, disc.2.weight, disc.2.bias."""
    return nn.Sequential(nn.Linear(5, 8), nn.ReLU(), nn.Linear(8, 1))
