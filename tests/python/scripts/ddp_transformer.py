# DDP over an encoder-decoder nn.Transformer pretrained on its encoder alone: the decoder's parameters get no
# gradient, so DDP needs find_unused_parameters=True; their .grad stays None on every rank, and the replicas
# stay equal. Then one full seq2seq step uses every parameter.
import os

import tinyddp as torch
import tinyddp.distributed as dist
import tinyddp.multiprocessing as mp
import tinyddp.nn as nn
import tinyddp.nn.functional as F
from tinyddp.nn.parallel import DistributedDataParallel as DDP


class Model(nn.Module):
    def __init__(self, vocab=11, d_model=8):
        super().__init__()
        self.embed = nn.Embedding(vocab, d_model)
        self.transformer = nn.Transformer(d_model, nhead=2, num_encoder_layers=1, num_decoder_layers=1,
                                          dim_feedforward=16, dropout=0.0, batch_first=True)
        self.head = nn.Linear(d_model, vocab)

    def forward(self, src, tgt=None):
        if tgt is None:   # masked-token pretraining on the encoder
            return self.head(self.transformer.encoder(self.embed(src)))
        mask = nn.Transformer.generate_square_subsequent_mask(tgt.size(1))
        return self.head(self.transformer(self.embed(src), self.embed(tgt), tgt_mask=mask))


def run(rank, world_size):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = "29583"
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    torch.manual_seed(0)
    model = DDP(Model(), find_unused_parameters=True)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    torch.manual_seed(50 + rank)
    src = torch.randint(0, 11, (3, 6))
    tgt = torch.randint(0, 11, (3, 5))
    for step in range(3):
        logits = model(src)
        loss = F.cross_entropy(logits.reshape(-1, 11), src.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        total = loss.detach().clone()
        dist.all_reduce(total)
        if rank == 0:
            print(f"pretrain step {step} loss {total.item() / world_size:.5f}", flush=True)
    none = [n for n, p in model.module.named_parameters() if p.grad is None]
    if rank == 0:
        print(len(none), none[:3], flush=True)
    logits = model(src, tgt[:, :-1])
    loss = F.cross_entropy(logits.reshape(-1, 11), tgt[:, 1:].reshape(-1))
    opt.zero_grad()
    loss.backward()
    opt.step()
    total = loss.detach().clone()
    dist.all_reduce(total)
    w = model.module.transformer.decoder.layers[0].multihead_attn.in_proj_weight.detach().clone()
    gathered = [torch.zeros_like(w) for _ in range(world_size)]
    dist.all_gather(gathered, w)
    if rank == 0:
        print(f"seq2seq loss {total.item() / world_size:.5f}", flush=True)
        print("replicas equal:", all(torch.equal(gathered[0], g) for g in gathered),
              sum(p.grad is None for p in model.parameters()), flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    mp.spawn(run, args=(2,), nprocs=2, join=True)
    print("done")
