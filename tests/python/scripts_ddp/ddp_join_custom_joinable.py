# The "Distributed Training with Uneven Inputs Using the Join Context Manager" tutorial (1.13) on the CPU: a
# custom Joinable (the tutorial's Counter, with its CounterJoinHook shadowing the all_reduce and broadcasting the
# max count from the last joiner) alone and next to a DDP model in one Join with sync_max_count=True, a Joinable
# that forgets to call Joinable.__init__, and throw_on_early_termination with the Counter first.
import os

import tinyddp as torch
import tinyddp.distributed as dist
import tinyddp.multiprocessing as mp
from tinyddp.distributed.algorithms.join import Join, Joinable, JoinHook
from tinyddp.nn.parallel import DistributedDataParallel as DDP

BACKEND = "gloo"
WORLD_SIZE = 2
NUM_INPUTS = 5


class CounterJoinHook(JoinHook):
    r"""
    Join hook for :class:`Counter`.

    Arguments:
        counter (Counter): the :class:`Counter` object using this hook.
        sync_max_count (bool): whether to sync the max count once all ranks
            join.
    """
    def __init__(self, counter, sync_max_count):
        self.counter = counter
        self.sync_max_count = sync_max_count

    def main_hook(self):
        r"""
        Shadows the counter's all-reduce by all-reducing a dim-1 zero tensor.
        """
        t = torch.zeros(1, device=self.counter.device)
        dist.all_reduce(t)

    def post_hook(self, is_last_joiner: bool):
        r"""
        Synchronizes the max count across all :class:`Counter` s if
        ``sync_max_count=True``.
        """
        if not self.sync_max_count:
            return
        rank = dist.get_rank(self.counter.process_group)
        common_rank = self.counter.find_common_rank(rank, is_last_joiner)
        if rank == common_rank:
            self.counter.max_count = self.counter.count.detach().clone()
        dist.broadcast(self.counter.max_count, src=common_rank)


class Counter(Joinable):
    r"""
    Example :class:`Joinable` that counts the number of training iterations
    that it participates in.
    """
    def __init__(self, device, process_group):
        super(Counter, self).__init__()
        self.device = device
        self.process_group = process_group
        self.count = torch.tensor([0], device=device).float()
        self.max_count = torch.tensor([0], device=device).float()

    def __call__(self):
        r"""
        Counts the number of inputs processed on this iteration by all ranks
        by all-reducing a dim-1 one tensor; increments its own internal count.
        """
        Join.notify_join_context(self)
        t = torch.ones(1, device=self.device).float()
        dist.all_reduce(t)
        self.count += t

    def join_hook(self, **kwargs) -> JoinHook:
        r"""
        Return a join hook that shadows the all-reduce in :meth:`__call__`.

        This join hook supports the following keyword arguments:
            sync_max_count (bool, optional): whether to synchronize the maximum
                count across all ranks once all ranks join; default is ``False``.
        """
        sync_max_count = kwargs.get("sync_max_count", False)
        return CounterJoinHook(self, sync_max_count)

    @property
    def join_device(self) -> torch.device:
        return self.device

    @property
    def join_process_group(self):
        return self.process_group

    def find_common_rank(self, rank, to_consider):
        r"""
        Returns the max rank of the ones to consider over the process group.
        """
        common_rank = torch.tensor([rank if to_consider else -1], device=self.device)
        dist.all_reduce(common_rank, op=dist.ReduceOp.MAX, group=self.process_group)
        common_rank = common_rank.item()
        return common_rank


class Forgetful(Joinable):
    def __init__(self):
        pass

    def join_hook(self, **kwargs):
        return JoinHook()

    @property
    def join_device(self):
        return torch.device("cpu")

    @property
    def join_process_group(self):
        return dist.group.WORLD


def worker(rank):
    assert torch.cuda.device_count() == 0
    os.environ["MASTER_ADDR"] = "localhost"
    os.environ["MASTER_PORT"] = "29979"
    dist.init_process_group(BACKEND, rank=rank, world_size=WORLD_SIZE)

    lines = []
    counter = Counter(torch.device("cpu"), dist.group.WORLD)
    inputs = [torch.tensor([1]).float() for _ in range(NUM_INPUTS + rank)]
    with Join([counter], sync_max_count=True):
        for _ in inputs:
            counter()
    lines.append(f"[alone] rank {rank}: {int(counter.count.item())} inputs processed before rejoining!")
    lines.append(f"[alone] rank {rank}: {int(counter.max_count.item())} inputs processed before rejoining!")
    dist.barrier()

    torch.manual_seed(0)
    model = DDP(torch.nn.Linear(1, 1))
    counter = Counter(torch.device("cpu"), dist.group.WORLD)
    with Join([model, counter], sync_max_count=True):
        for input in inputs:
            loss = model(input).sum()
            loss.backward()
            counter()
    lines.append(f"[with DDP] rank {rank}: count {int(counter.count.item())} max_count "
                 f"{int(counter.max_count.item())} weight grad {model.module.weight.grad.item():.4f}")
    dist.barrier()

    try:
        Join.notify_join_context(Forgetful())
    except AssertionError as e:
        # (the class prints as __mp_main__.Forgetful in a 1.13 child process: only the message's end here)
        lines.append(f"Forgetful: AssertionError: ...{str(e).split('Forgetful')[1]}")
    lines.append(f"rank {rank}: config outside a Join {Counter(torch.device('cpu'), None)._join_config}")
    dist.barrier()

    counter = Counter(torch.device("cpu"), dist.group.WORLD)
    try:
        with Join([counter], throw_on_early_termination=True):
            for _ in inputs:
                counter()
    except RuntimeError as e:
        lines.append(f"[throw] rank {rank} after {int(counter.count.item())}: RuntimeError: {e}")
    everyone = [None] * WORLD_SIZE
    dist.all_gather_object(everyone, lines)
    if rank == 0:
        for rank_lines in everyone:
            for line in rank_lines:
                print(line)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    mp.spawn(worker, nprocs=WORLD_SIZE, join=True)
    print("done")
