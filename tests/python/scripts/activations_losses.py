# Activations and losses beyond ReLU/MSE: SiLU, ELU, Softplus, Hardtanh/ReLU6, Mish, LogSigmoid, Softmin,
# SmoothL1/Huber/KLDiv/BCE with their reductions, normalize, cosine similarity, pad, Unflatten.
import tinyddp as torch
import tinyddp.nn as nn
import tinyddp.nn.functional as F

torch.manual_seed(11)
x = torch.linspace(-3, 3, 7, requires_grad=True)
for act in (nn.SiLU(), nn.ELU(alpha=0.5), nn.SELU(), nn.Softplus(), nn.Softplus(beta=2, threshold=1),
            nn.Hardtanh(-2.0, 2.0), nn.ReLU6(), nn.Mish(), nn.LogSigmoid(), nn.Softsign()):
    y = act(x)
    (g,) = torch.autograd.grad(y.sum(), x)
    print(act, [round(v, 4) for v in y.tolist()], [round(v, 4) for v in g.tolist()])
print(F.relu6(torch.tensor([-1.0, 0.0, 3.0, 6.0, 7.0])), nn.Softmin(dim=0)(torch.tensor([1.0, 2.0])))

pred, target = torch.randn(4, 3, requires_grad=True), torch.randn(4, 3)
for loss_fn in (nn.SmoothL1Loss(), nn.SmoothL1Loss(beta=0.5, reduction="sum"), nn.HuberLoss(delta=0.7),
                nn.HuberLoss(reduction="none")):
    loss = loss_fn(pred, target)
    print(loss_fn, [round(v, 5) for v in loss.reshape(-1).tolist()][:4])
log_probs = F.log_softmax(torch.randn(2, 4), dim=1)
probs = F.softmax(torch.randn(2, 4), dim=1)
# 5 decimals: the log_target form sums exp() values, where the engine's exp and 1.13's vectorized one can
# differ by an ulp (the sixth decimal of this sum moved by one).
print(f"{F.kl_div(log_probs, probs, reduction='batchmean').item():.6f}",
      f"{nn.KLDivLoss(reduction='sum', log_target=True)(log_probs, probs.log()).item():.5f}")
print(f"{F.kl_div(log_probs, probs).item():.6f}")
logits = torch.randn(5, requires_grad=True)
labels = torch.tensor([1.0, 0.0, 1.0, 1.0, 0.0])
bce = F.binary_cross_entropy_with_logits(logits, labels, reduction="none")
print([round(v, 5) for v in bce.tolist()], f"{F.binary_cross_entropy(torch.sigmoid(logits), labels).item():.5f}")
bce.sum().backward()
print([round(v, 5) for v in logits.grad.tolist()])
v = torch.tensor([[3.0, 4.0], [0.0, 0.0]], requires_grad=True)
n = F.normalize(v, dim=1)
n.sum().backward()
print(n, v.grad)
a, b = torch.randn(3, 5), torch.randn(3, 5)
print([round(s, 5) for s in F.cosine_similarity(a, b).tolist()], nn.CosineSimilarity(dim=0)(a, b).shape)
print(F.pad(torch.ones(2, 2), (1, 2)), F.pad(torch.ones(1, 2, 2), (0, 0, 1, 0), value=3.0).shape)
print(F.pad(torch.arange(6.0).view(2, 3), (-1, 0)))
print(nn.Unflatten(1, (2, 3))(torch.zeros(4, 6)).shape, nn.Sequential(nn.Flatten(), nn.Unflatten(1, (3, 2))))
