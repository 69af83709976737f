# Adaptive max pooling with return_indices (as U-Net / SegNet style unpooling and attention-map code use it):
# each window's first maximum in row-major order (a NaN wins), indices in the flattened plane, the gradient to
# those elements; the functional *_with_indices forms and max_unpool2d of max_pool2d's indices.
import tinyddp as torch
import tinyddp.nn as nn
import tinyddp.nn.functional as F
torch.manual_seed(0)
x = torch.randn(2, 3, 5, 7, requires_grad=True)
for size in (2, (3, 4), (5, 7), (None, 2), 1):
    v, i = nn.AdaptiveMaxPool2d(size, return_indices=True)(x)
    ref = F.adaptive_max_pool2d(x, size)
    print(size, tuple(v.shape), i[0, 0].tolist(), bool((v == ref).all()), v.grad_fn.name())
v, i = F.adaptive_max_pool2d(x, (2, 3), return_indices=True)
(v * torch.arange(v.numel(), dtype=torch.float32).reshape(v.shape)).sum().backward()
print(x.grad[1, 2].tolist())
t = torch.tensor([[[1., 3., 3., 2., float("nan"), 0., 5.]]])
print(F.adaptive_max_pool1d(t, 3, return_indices=True))
print(nn.AdaptiveMaxPool1d(2, return_indices=True)(torch.arange(6.).reshape(1, 1, 6)))
print(F.adaptive_max_pool2d_with_indices(torch.ones(1, 2, 2), 1))
u = F.max_unpool2d(*F.max_pool2d(torch.arange(16.).reshape(1, 1, 4, 4), 2, return_indices=True), 2)
print(u)
