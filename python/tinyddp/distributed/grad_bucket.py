"""torch.distributed.GradBucket: a bucket of gradients as a DDP comm hook sees it.

buffer() is the reducer's flat bucket of this iteration's local gradients, not yet divided by the world size
(a comm hook does its own division); gradients() are views of it, one per parameter, shaped like them.
"""
import builtins


class GradBucket:
    def __init__(self, index, buffer, parameters, is_last):
        self._index, self._buffer, self._parameters, self._is_last = index, buffer, parameters, is_last

    def index(self):
        """The bucket's position in the launch order; 0 is the bucket that holds the last parameters."""
        return self._index

    def buffer(self):
        return self._buffer

    def set_buffer(self, buffer):
        self._buffer = buffer

    def gradients(self):
        views, offset = [], 0
        for p in self._parameters:
            n = p.numel()
            views.append(self._buffer.narrow(0, offset, n).view(p.shape))
            offset += n
        return views

    def parameters(self):
        return list(self._parameters)

    def is_last(self):
        """True for the bucket launched last in the iteration (the one that holds the first parameters)."""
        return self._is_last

    def __repr__(self):
        return (f"GradBucket(index={self._index}, parameters={len(self._parameters)}, "
                f"elements={builtins.sum(p.numel() for p in self._parameters)}, is_last={self._is_last})")
