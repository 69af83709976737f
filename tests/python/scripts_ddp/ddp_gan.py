# A GAN under DDP as the DCGAN example trains it: generator and discriminator each wrapped in DDP, one optimizer
# each, the D step on real data and on fake.detach(), the G step through D (so D's DDP reduces gradients in the G
# step too), with and without find_unused_parameters; the replicas stay equal on every rank. Then the pix2pix-style
# set_requires_grad(netD, False) for the G step (D's reducer gets no gradient in that backward: what the next D
# forward says), and the mistake of reusing one D(fake) for both losses after optimizerD.step() (autograd's
# in-place error).
import os

import tinyddp as torch
import tinyddp.distributed as dist
import tinyddp.multiprocessing as mp
import tinyddp.nn as nn
import tinyddp.optim as optim
from tinyddp.nn.parallel import DistributedDataParallel as DDP

NZ = 3


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.main = nn.Sequential(nn.Linear(NZ, 8), nn.ReLU(True), nn.Linear(8, 4), nn.Tanh())

    def forward(self, z):
        return self.main(z)


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.main = nn.Sequential(nn.Linear(4, 8), nn.LeakyReLU(0.2, inplace=True), nn.Linear(8, 1), nn.Sigmoid())

    def forward(self, x):
        return self.main(x).view(-1, 1).squeeze(1)


def same_on_all_ranks(tensors):
    ok = True
    for t in tensors:
        parts = [torch.zeros_like(t) for _ in range(dist.get_world_size())]
        dist.all_gather(parts, t.detach().contiguous())
        ok = ok and all(torch.equal(parts[0], p) for p in parts[1:])
    return ok


def set_requires_grad(net, flag):
    for p in net.parameters():
        p.requires_grad = flag


def train(rank, world_size, mode):
    tag = f"[{mode}]"
    torch.manual_seed(0)
    netG = DDP(Generator(), find_unused_parameters=(mode == "find_unused"))
    netD = DDP(Discriminator(), find_unused_parameters=(mode == "find_unused"))
    criterion = nn.BCELoss()
    optimizerD = optim.Adam(netD.parameters(), lr=0.01, betas=(0.5, 0.999))
    optimizerG = optim.Adam(netG.parameters(), lr=0.01, betas=(0.5, 0.999))
    torch.manual_seed(100 + rank)
    real_label, fake_label = 1.0, 0.0
    for i in range(3):
        real = torch.randn(6, 4) * 0.5 + 1.0
        b_size = real.size(0)
        # (1) Update D: maximize log(D(x)) + log(1 - D(G(z)))
        netD.zero_grad()
        label = torch.full((b_size,), real_label, dtype=torch.float)
        output = netD(real)
        errD_real = criterion(output, label)
        errD_real.backward()
        D_x = output.mean().item()
        noise = torch.randn(b_size, NZ)
        fake = netG(noise)
        label.fill_(fake_label)
        output = netD(fake.detach())
        errD_fake = criterion(output, label)
        errD_fake.backward()
        errD = errD_real + errD_fake
        optimizerD.step()
        # (2) Update G: maximize log(D(G(z)))
        if mode == "frozen D":
            set_requires_grad(netD, False)
        netG.zero_grad()
        label.fill_(real_label)
        output = netD(fake)
        errG = criterion(output, label)
        errG.backward()
        optimizerG.step()
        if mode == "frozen D":
            set_requires_grad(netD, True)
        d_grad = netD.module.main[2].weight.grad
        if rank == 0:
            print(f"{tag} [{i}/3] Loss_D: {errD.item():.4f} Loss_G: {errG.item():.4f} D(x): {D_x:.4f} "
                  f"D grad after G step: {None if d_grad is None else round(d_grad.abs().sum().item(), 4)}")
        synced = same_on_all_ranks(list(netG.parameters()) + list(netD.parameters()))
        d_grads_synced = d_grad is None or same_on_all_ranks([d_grad])
        if rank == 0:
            print(f"{tag} replicas same on all ranks: {synced}, D grads same on all ranks: {d_grads_synced}")


def reuse_d_output(rank):
    torch.manual_seed(0)
    netG, netD = DDP(Generator()), DDP(Discriminator())
    optimizerD = optim.SGD(netD.parameters(), lr=0.1)
    criterion = nn.BCELoss()
    fake = netG(torch.randn(4, NZ))
    output = netD(fake)   # used for both losses: D's step changes its weights in place before G's backward
    criterion(output, torch.zeros(4)).backward(retain_graph=True)
    optimizerD.step()
    try:
        criterion(output, torch.ones(4)).backward()
    except RuntimeError as e:
        if rank == 0:
            print("G backward after optimizerD.step():", str(e).split("\n")[0])


def run(rank, world_size):
    os.environ["MASTER_ADDR"] = "localhost"
    os.environ["MASTER_PORT"] = "29971"
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    for mode in ("default", "find_unused", "frozen D"):
        try:
            train(rank, world_size, mode)
        except RuntimeError as e:
            if rank == 0:
                print(f"[{mode}] RuntimeError: {str(e).splitlines()[0]}")
        dist.barrier()
    reuse_d_output(rank)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    mp.spawn(run, args=(2,), nprocs=2, join=True)
    print("done")
