# PyTorch's MNIST example (examples/mnist/main.py) on random 28x28 "digits": Conv2d, Dropout, max_pool2d,
# log_softmax and nll_loss, Adadelta with StepLR(gamma=0.7), the test loop's summed loss and accuracy.
import tinyddp as torch
import tinyddp.nn as nn
import tinyddp.nn.functional as F
import tinyddp.optim as optim
from tinyddp.optim.lr_scheduler import StepLR


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, 1)
        self.conv2 = nn.Conv2d(8, 16, 3, 1)
        self.dropout1 = nn.Dropout(0.25)
        self.dropout2 = nn.Dropout(0.5)
        self.fc1 = nn.Linear(16 * 12 * 12, 32)
        self.fc2 = nn.Linear(32, 10)

    def forward(self, x):
        x = self.conv1(x)
        x = F.relu(x)
        x = self.conv2(x)
        x = F.relu(x)
        x = F.max_pool2d(x, 2)
        x = self.dropout1(x)
        x = torch.flatten(x, 1)
        x = self.fc1(x)
        x = F.relu(x)
        x = self.dropout2(x)
        x = self.fc2(x)
        output = F.log_softmax(x, dim=1)
        return output


def train(model, data, optimizer, epoch):
    model.train()
    for batch_idx, (x, target) in enumerate(data):
        optimizer.zero_grad()
        output = model(x)
        loss = F.nll_loss(output, target)
        loss.backward()
        optimizer.step()
        print(f"Train Epoch: {epoch} [{batch_idx * len(x)}/{len(data) * len(x)}]\tLoss: {loss.item():.4f}")


def test(model, data):
    model.eval()
    test_loss = 0
    correct = 0
    with torch.no_grad():
        for x, target in data:
            output = model(x)
            test_loss += F.nll_loss(output, target, reduction="sum").item()
            pred = output.argmax(dim=1, keepdim=True)
            correct += pred.eq(target.view_as(pred)).sum().item()
    n = sum(len(x) for x, _ in data)
    print(f"\nTest set: Average loss: {test_loss / n:.3f}, Accuracy: {correct}/{n} ({100. * correct / n:.0f}%)\n")


torch.manual_seed(1)
images = torch.randn(24, 1, 28, 28)
labels = torch.randint(0, 10, (24,))
train_data = [(images[i:i + 8], labels[i:i + 8]) for i in range(0, 16, 8)]
test_data = [(images[16:], labels[16:])]
model = Net()
print(model)
optimizer = optim.Adadelta(model.parameters(), lr=1.0)
scheduler = StepLR(optimizer, step_size=1, gamma=0.7)
for epoch in range(1, 4):
    train(model, train_data, optimizer, epoch)
    test(model, test_data)
    scheduler.step()
print(optimizer.param_groups[0]["lr"], sorted(optimizer.state_dict()["state"][0].keys()))
