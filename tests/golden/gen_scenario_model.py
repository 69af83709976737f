"""The scenario model of ../shared/DESIGN.md (models/) in PyTorch, for the generators that run it
(gen_ddp_scenarios.py, gen_ddp_buckets.py). Imports torch: only generators import this module."""
import torch
import torch.nn as nn


class ScenarioModel(nn.Module):
    """trunk -> head_a (task a), head_b (task b), text_decoder (task t); parameter indices 0..9 in this order,
    after `unused_scale` (index 0) when extra_unused is set."""

    def __init__(self, extra_unused=False):
        super().__init__()
        if extra_unused:
            self.unused_scale = nn.Parameter(torch.ones(1))
        self.trunk = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 8))
        self.head_a = nn.Linear(8, 1)
        self.head_b = nn.Linear(8, 3)
        self.text_decoder = nn.Linear(8, 5)

    def forward(self, x, mode="full"):
        """mode: the plan language's forward modes: full, detach (head_b and text_decoder read
        trunk(x).detach()), no_text (the text decoder is not called), drop_text (it runs, its output is
        not returned)."""
        h = self.trunk(x)
        if mode == "detach":
            hd = h.detach()
            return self.head_a(h), self.head_b(hd), self.text_decoder(hd)
        a, b = self.head_a(h), self.head_b(h)
        if mode == "no_text":
            return a, b
        t = self.text_decoder(h)
        if mode == "drop_text":
            return a, b
        return a, b, t
