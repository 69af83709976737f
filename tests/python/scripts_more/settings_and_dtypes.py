# What scripts query and set before training: versions and build flags, device selection across CUDA, MPS and
# CPU, dtype objects and their limits (finfo/iinfo), default dtype, printing options, thread counts, legacy
# Variable code, a learning-rate sweep built with logspace, and the errors of a few common mistakes.
import tinyddp as torch
import tinyddp.nn as nn
from tinyddp.autograd import Variable

print(f"PyTorch {torch.__version__}; CUDA {torch.version.cuda}; cuDNN {torch.backends.cudnn.version()}")
major, minor = (int(v) for v in torch.__version__.split(".")[:2])
print("major/minor:", major, minor, torch.__version__ < "2.0", torch.__version__ >= (1, 10))
if torch.cuda.is_available():
    device = torch.device("cuda")
elif torch.backends.mps.is_available():
    device = torch.device("mps")
else:
    device = torch.device("cpu")
print("device", device, "mps built", torch.backends.mps.is_built(), "cuda count", torch.cuda.device_count())
print("cudnn", torch.backends.cudnn.enabled, torch.backends.cudnn.deterministic, torch.backends.cudnn.benchmark)
torch.backends.cuda.matmul.allow_tf32 = True
torch.backends.cudnn.allow_tf32 = True
print("tf32", torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32)

for dt in (torch.float16, torch.bfloat16, torch.float32, torch.float64):
    fi = torch.finfo(dt)
    print(dt, fi.bits, fi.eps, fi.max, fi.tiny, dt.is_floating_point)
for dt in (torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64):
    ii = torch.iinfo(dt)
    print(dt, ii.bits, ii.min, ii.max, dt.is_signed)
print(torch.finfo(torch.float32))
print(torch.iinfo(torch.int64))
print(torch.half, torch.float, torch.double, torch.long, torch.int, torch.short, torch.bool, torch.cfloat)
print(torch.get_default_dtype(), torch.tensor([1.0]).dtype, torch.tensor([1]).dtype, torch.tensor([True]).dtype)
eps = torch.finfo(torch.float32).eps
x = torch.tensor([1e-8, 0.5, 1.0])
print(torch.log(x.clamp(min=eps)), (x + eps).log())

print("threads", torch.get_num_threads() >= 1, torch.get_num_interop_threads() >= 1)
torch.set_num_threads(2)
print("threads now", torch.get_num_threads())

torch.manual_seed(0)
w = Variable(torch.randn(3, 2), requires_grad=True)
b = Variable(torch.zeros(2), requires_grad=True)
inp = Variable(torch.randn(4, 3))
out = (inp.mm(w) + b).pow(2).sum()
out.backward()
print(w.grad, b.grad, isinstance(w, Variable), type(w).__name__)

lrs = torch.logspace(-4, -1, steps=7)
print(lrs)
print([f"{lr:.2e}" for lr in lrs.tolist()])
model = nn.Linear(3, 1)
X, Y = torch.randn(16, 3), torch.randn(16, 1)
init = {k: v.clone() for k, v in model.state_dict().items()}
for lr in lrs.tolist():
    model.load_state_dict(init)
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    for _ in range(5):
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(X), Y)
        loss.backward()
        opt.step()
    print(f"lr {lr:.1e} loss {loss.item():.4f}")

torch.set_printoptions(precision=2, linewidth=60)
print(torch.linspace(0, 1, 12))
torch.set_printoptions(threshold=5, edgeitems=2)
print(torch.arange(20.0))
torch.set_printoptions(profile="default")
print(torch.arange(20.0)[:4], torch.tensor([1e-10, 1e10]))

for bad in (lambda: nn.Linear(4, 2)(torch.randn(3, 5)),
            lambda: torch.ones(2, 3) @ torch.ones(2, 3),
            lambda: torch.ones(2, 3).view(4),
            lambda: nn.CrossEntropyLoss()(torch.randn(3, 4), torch.tensor([0, 1, 4])),
            lambda: torch.finfo(torch.int32),
            lambda: torch.backends.cudnn.__setattr__("benchmark", 1)):
    try:
        bad()
    except Exception as e:
        print(type(e).__name__ + ":", e)
