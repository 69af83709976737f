"""torch.distributed.nn.functional: all_gather, all_reduce and broadcast as autograd Functions, with 1.13's
backward rules: all_gather's gradient is the sum over ranks of each rank's gradient for this rank's slice (1.13
sums an all_to_all of them on gloo; here an all_reduce of the stacked gradients, then this rank's row: the same
sums), all_reduce(SUM)'s is the all_reduce of the gradient, broadcast's the sum of the gradients at the source."""
import tinyddp as torch
import tinyddp.distributed as dist
from tinyddp.autograd.function import Function

__all__ = ["all_gather", "all_reduce", "broadcast"]


class _AllGather(Function):
    @staticmethod
    def forward(ctx, group, tensor):
        tensor = tensor.contiguous()
        ctx.group = group
        out = [torch.empty_like(tensor) for _ in range(dist.get_world_size(group=group))]
        dist.all_gather(out, tensor, group=group)
        return tuple(out)

    @staticmethod
    def backward(ctx, *grad_outputs):
        grads = torch.stack([g.contiguous() for g in grad_outputs])
        dist.all_reduce(grads, op=dist.ReduceOp.SUM, group=ctx.group)
        return None, grads[dist.get_rank(group=ctx.group)]


class _AllReduce(Function):
    @staticmethod
    def forward(ctx, op, group, tensor):
        ctx.group, ctx.op = group, op
        tensor = tensor.clone()
        dist.all_reduce(tensor, op=op, group=group)
        return tensor

    @staticmethod
    def backward(ctx, grad_output):
        if ctx.op != dist.ReduceOp.SUM:
            raise RuntimeError(f"tinyddp: the gradient of distributed.nn.all_reduce with op={ctx.op} is not "
                               "implemented; use ReduceOp.SUM")
        return None, None, _AllReduce.apply(ctx.op, ctx.group, grad_output)


class _Broadcast(Function):
    @staticmethod
    def forward(ctx, src, group, tensor):
        ctx.src, ctx.group = src, group
        rank = dist.get_rank()
        ctx.rank = rank
        if src == rank:
            tensor = tensor.clone()
        dist.broadcast(tensor, src, group=group)
        return tensor

    @staticmethod
    def backward(ctx, grad_output):
        g = grad_output.clone()
        dist.reduce(g, ctx.src, op=dist.ReduceOp.SUM, group=ctx.group)
        return None, None, g if ctx.rank == ctx.src else torch.zeros_like(grad_output)


def all_gather(tensor, group=dist.group.WORLD):
    """Every rank's `tensor`, as a tuple in rank order; differentiable."""
    return _AllGather.apply(group, tensor)


def all_reduce(tensor, op=dist.ReduceOp.SUM, group=dist.group.WORLD):
    """The reduction over ranks of `tensor` (a new tensor); differentiable for ReduceOp.SUM."""
    return _AllReduce.apply(op, group, tensor)


def broadcast(tensor, src, group=dist.group.WORLD):
    """`src`'s tensor on every rank; the gradient sums at `src` (zeros elsewhere)."""
    return _Broadcast.apply(src, group, tensor)
