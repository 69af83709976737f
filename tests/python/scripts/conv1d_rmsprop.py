# A 1-D CNN on short sequences: Conv1d (grouped, 'same' padding), GroupNorm, PReLU, MaxPool1d, AdaptiveAvgPool1d,
# Dropout; trained with RMSprop and StepLR, then resumed from the optimizer's state_dict; the losses' options.
import tinyddp as torch
import tinyddp.nn as nn
import tinyddp.nn.functional as F


class SeqNet(nn.Module):
    def __init__(self, channels=4, classes=3):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv1d(2, 8, kernel_size=5, padding="same"),
            nn.GroupNorm(2, 8),
            nn.PReLU(8),
            nn.MaxPool1d(2),
            nn.Conv1d(8, 8, 3, groups=channels, padding=1, bias=False),
            nn.Hardswish(),
            nn.AdaptiveAvgPool1d(1),
        )
        self.head = nn.Sequential(nn.Flatten(), nn.Dropout(0.1), nn.Linear(8, classes))

    def forward(self, x):
        return self.head(self.features(x))


torch.manual_seed(0)
model = SeqNet()
print(model)
print([(n, tuple(p.shape)) for n, p in model.named_parameters()])
print(list(model.state_dict().keys()))
print(model.features[0].weight[0, 0].detach(), model.features[2].weight.detach())
x = torch.randn(12, 2, 16)
y = torch.tensor([0, 1, 2] * 4)
opt = torch.optim.RMSprop(model.parameters(), lr=0.01, momentum=0.9, centered=True, weight_decay=1e-4)
sched = torch.optim.lr_scheduler.StepLR(opt, step_size=3, gamma=0.5)
print(opt)
loss_fn = nn.CrossEntropyLoss(label_smoothing=0.1)
for epoch in range(6):
    model.train()
    opt.zero_grad()
    loss = loss_fn(model(x), y)
    loss.backward()
    opt.step()
    sched.step()
    print(f"epoch {epoch} loss {loss.item():.4f} lr {sched.get_last_lr()[0]:.5f}")
state = opt.state_dict()
print(sorted(state["state"][0].keys()), state["state"][0]["step"], state["param_groups"][0]["lr"])
resumed = torch.optim.RMSprop(model.parameters(), lr=0.5)
resumed.load_state_dict(state)
print(resumed.param_groups[0]["momentum"], resumed.param_groups[0]["centered"], resumed.param_groups[0]["lr"])
model.eval()
with torch.no_grad():
    logits = model(x)
print(logits.shape, (logits.argmax(1) == y).float().mean().item() >= 0.0)
print(f"{F.cross_entropy(logits, y, reduction='sum').item():.4f}",
      F.cross_entropy(logits, y, reduction="none").shape,
      f"{F.nll_loss(F.log_softmax(logits, 1), y, weight=torch.tensor([1.0, 2.0, 0.5])).item():.4f}")
print(F.conv1d(torch.ones(1, 1, 5), torch.ones(1, 1, 3), padding=1))
print(F.adaptive_avg_pool1d(torch.arange(10.0).view(1, 1, 10), 4))
print(F.pad(torch.arange(6.0).view(1, 2, 3), (2, 1), mode="reflect"))
print(F.pad(torch.arange(6.0).view(1, 2, 3), (1, 2), mode="replicate"))
print(nn.ParameterDict({"scale": nn.Parameter(torch.ones(3))}))
