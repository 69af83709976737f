"""torch.distributed.algorithms.ddp_comm_hooks.default_hooks: allreduce_hook and fp16_compress_hook, written
as a user would write a hook (register with ddp.register_comm_hook(state=None, hook=allreduce_hook)).

The C++ reducer has the same two built in (dist/comm_hooks.h); these are the Python path, through Futures.
"""
import tinyddp.distributed as dist
from tinyddp import _C


def _group(process_group):
    return process_group if process_group is not None else dist.group.WORLD


def _allreduce_fut(process_group, tensor):
    """Divides `tensor` by the world size in place and returns a Future of its sum over the ranks."""
    group_to_use = _group(process_group)
    tensor.div_(group_to_use.size())
    return dist.all_reduce(tensor, group=group_to_use, async_op=True).get_future().then(lambda fut: fut.value()[0])


def allreduce_hook(process_group, bucket):
    """What DDP does without a hook: the bucket divided by the world size, then allreduced (summed)."""
    return _allreduce_fut(process_group, bucket.buffer())


def fp16_compress_hook(process_group, bucket):
    """Halves the bytes on the wire: the bucket is cast to fp16, divided by the world size in fp16, summed in
    fp16, and cast back into the bucket. tinyddp has no float16 dtype, so the values stay float32, rounded to
    the nearest fp16 after the cast, the division and the sum (the sum is rounded once, which is what an fp16
    sum of two ranks gives; with more ranks fp16 rounds each partial sum). The wire carries 4 bytes per value."""
    group_to_use = _group(process_group)
    compressed = bucket.buffer().clone()
    _C._dist.round_to_fp16_(compressed)                   # .to(torch.float16)
    compressed.div_(group_to_use.size())
    _C._dist.round_to_fp16_(compressed)                   # the division's result is an fp16
    fut = dist.all_reduce(compressed, group=group_to_use, async_op=True).get_future()

    def decompress(fut):
        summed = fut.value()[0]
        _C._dist.round_to_fp16_(summed)                   # the fp16 sum
        decompressed = bucket.buffer()
        decompressed.copy_(summed)
        return decompressed

    return fut.then(decompress)
