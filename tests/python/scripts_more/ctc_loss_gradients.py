# CTC as speech scripts use it: through a log_softmax (gradients wrt the logits), and on a detached leaf of
# log-probabilities as the PyTorch docs' example does, where 1.13's backward kernel adds exp(log_probs) to the
# true gradient (it assumes normalized inputs); padded and concatenated targets, every reduction, zero_infinity.
import tinyddp as torch
import tinyddp.nn as nn
import tinyddp.nn.functional as F
torch.manual_seed(0)
T, N, C, S = 6, 3, 5, 3
logits = torch.randn(T, N, C, requires_grad=True)
lp = logits.log_softmax(2)
targets = torch.randint(1, C, (N, S), dtype=torch.long)
il = torch.tensor([6, 5, 4]); tl = torch.tensor([3, 2, 1])
for red in ("mean", "sum", "none"):
    loss = F.ctc_loss(lp, targets, il, tl, reduction=red)
    g, = torch.autograd.grad(loss.sum(), logits, retain_graph=True)
    print(red, [f"{v:.5f}" for v in loss.reshape(-1).tolist()], f"{g.abs().sum().item():.5f}")
leaf = torch.randn(T, N, C).log_softmax(2).detach().requires_grad_()
ctc = nn.CTCLoss()
loss = ctc(leaf, targets, il, tl)
loss.backward()
print(f"{loss.item():.5f}", [f"{v:.4f}" for v in leaf.grad[0, 0].tolist()], [f"{v:.4f}" for v in leaf.grad[5, 2].tolist()])
flat = torch.cat([targets[0, :3], targets[1, :2], targets[2, :1]])
leaf.grad = None
loss = F.ctc_loss(leaf, flat, il, tl, reduction="sum")
loss.backward()
print(f"{loss.item():.5f}", f"{leaf.grad.abs().sum().item():.5f}")
imp = torch.randn(2, 1, 3).log_softmax(2).detach().requires_grad_()
loss = F.ctc_loss(imp, torch.tensor([[1, 1, 1]]), torch.tensor([2]), torch.tensor([3]), zero_infinity=True)
loss.backward()
print(loss.item(), imp.grad.abs().sum().item())
