# Shared parameters and gradients taken by hand under DDP: a language-model head tied to its embedding (one
# parameter, registered twice: DDP reduces it once, the state_dict keeps both keys), one Linear applied twice in an
# nn.Sequential, nn.ParameterList/ParameterDict parameters, torch.autograd.grad with respect to the parameters
# (no AccumulateGrad runs, so DDP reduces nothing and .grad stays None: each rank keeps its own gradients, and the
# next backward trains as usual), a WGAN-GP gradient penalty (autograd.grad on the input with create_graph=True,
# then one backward), a full backward hook on a submodule, and a non-finite gradient on one rank only
# (clip_grad_norm_ returns inf on both, and error_if_nonfinite=True raises).
import os

import tinyddp as torch
import tinyddp.distributed as dist
import tinyddp.multiprocessing as mp
import tinyddp.nn as nn
from tinyddp.nn.parallel import DistributedDataParallel as DDP


class TiedLM(nn.Module):
    def __init__(self, vocab=7, dim=4):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.mix = nn.Linear(dim, dim)
        self.out = nn.Linear(dim, vocab, bias=False)
        self.out.weight = self.emb.weight   # weight tying

    def forward(self, tokens):
        return self.out(torch.tanh(self.mix(self.emb(tokens))))


class Gates(nn.Module):
    def __init__(self):
        super().__init__()
        self.scales = nn.ParameterList([nn.Parameter(torch.ones(2)), nn.Parameter(torch.full((2,), 0.5))])
        self.extra = nn.ParameterDict({"shift": nn.Parameter(torch.zeros(2))})

    def forward(self, x):
        return x * self.scales[0] + (x * self.scales[1]) ** 2 + self.extra["shift"]


def grads(model):
    return [None if p.grad is None else round(p.grad.sum().item(), 4) for p in model.parameters()]


def everyone(value):
    out = [None] * dist.get_world_size()
    dist.all_gather_object(out, value)
    return out


def show(rank, label, value):
    if rank == 0:
        print(f"{label}: {value}", flush=True)


def run(rank, world_size, port):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=world_size)

    torch.manual_seed(0)
    lm = DDP(TiedLM())
    opt = torch.optim.SGD(lm.parameters(), lr=0.5)
    torch.manual_seed(rank)
    show(rank, "tied: parameters", [n for n, _ in lm.named_parameters()])
    show(rank, "tied: state_dict keys", list(lm.state_dict().keys()))
    for step in range(2):
        tokens = torch.randint(0, 7, (3, 5))
        opt.zero_grad()
        loss = nn.functional.cross_entropy(lm(tokens[:, :-1]).reshape(-1, 7), tokens[:, 1:].reshape(-1))
        loss.backward()
        opt.step()
        show(rank, f"tied step {step}: loss {loss.item():.4f} grads", everyone(grads(lm)))
    show(rank, "tied: still one tensor", lm.module.out.weight is lm.module.emb.weight)

    torch.manual_seed(0)
    lin = nn.Linear(2, 2)
    twice = DDP(nn.Sequential(lin, nn.Tanh(), lin))
    twice(torch.randn(3, 2) + rank).sum().backward()
    show(rank, "one Linear twice: parameters", len(list(twice.parameters())))
    show(rank, "one Linear twice: grads", everyone(grads(twice)))

    gates = DDP(Gates())
    gates(torch.randn(3, 2) + rank).sum().backward()
    show(rank, "ParameterList/Dict", [n for n, _ in gates.named_parameters()])
    show(rank, "ParameterList/Dict grads", everyone(grads(gates)))

    torch.manual_seed(0)
    net = DDP(nn.Sequential(nn.Linear(2, 3), nn.Softplus(), nn.Linear(3, 1)))
    out = net(torch.randn(4, 2) + rank).sum()
    by_hand = torch.autograd.grad(out, list(net.parameters()))
    show(rank, "autograd.grad: per rank", everyone([round(g.sum().item(), 4) for g in by_hand]))
    show(rank, "autograd.grad: .grad", grads(net))
    net(torch.randn(4, 2)).sum().backward()
    show(rank, "backward after autograd.grad", everyone(grads(net)))

    net.zero_grad()
    x = (torch.randn(4, 2) + rank).requires_grad_()
    critic = net(x)
    gx, = torch.autograd.grad(critic.sum(), x, create_graph=True)
    penalty = ((gx.norm(2, dim=1) - 1) ** 2).mean()
    (critic.mean() + 10 * penalty).backward()
    show(rank, f"gradient penalty {everyone(round(penalty.item(), 4))} grads", everyone(grads(net)))

    torch.manual_seed(0)
    body = nn.Sequential(nn.Linear(2, 2), nn.ReLU(), nn.Linear(2, 1))
    seen = []
    body[0].register_full_backward_hook(lambda mod, gin, gout: seen.append(round(gout[0].sum().item(), 4)))
    hooked = DDP(body)
    hooked(torch.randn(3, 2) + rank).sum().backward()
    show(rank, "full backward hook saw (local)", everyone(seen))
    show(rank, "full backward hook grads", everyone(grads(hooked)))

    torch.manual_seed(0)
    lin = DDP(nn.Linear(2, 1))
    x = torch.randn(3, 2)
    if rank == 1:
        x[0, 0] = float("inf")
    lin(x).sum().backward()
    total = torch.nn.utils.clip_grad_norm_(lin.parameters(), 1.0)
    show(rank, "non-finite on rank 1: norms", everyone(total.item()))
    show(rank, "non-finite grads", everyone(grads(lin)))
    try:
        torch.nn.utils.clip_grad_norm_(lin.parameters(), 1.0, error_if_nonfinite=True)
    except RuntimeError as e:
        show(rank, "error_if_nonfinite", f"RuntimeError: {e}")
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    mp.spawn(run, args=(2, 29858), nprocs=2)
    print("done")
