"""torch.nn.Flatten over Tensor.flatten, torch.nn.Unflatten over Tensor.reshape."""
from tinyddp.nn.modules.module import Module


class Flatten(Module):
    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, input):
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self):
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Dim `dim` split into `unflattened_size` (a tuple or list of sizes, one of which may be -1)."""

    def __init__(self, dim, unflattened_size):
        super().__init__()
        self.dim, self.unflattened_size = dim, unflattened_size

    def forward(self, input):
        shape = list(input.shape)
        dim = self.dim % len(shape)
        return input.reshape(shape[:dim] + list(self.unflattened_size) + shape[dim + 1:])

    def extra_repr(self):
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"
