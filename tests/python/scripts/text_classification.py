# The text-classification tutorial's model: EmbeddingBag (mean) over token ids with offsets, a Linear head, its
# init_weights (uniform_ in [-0.5, 0.5], zero bias), SGD with StepLR, clip_grad_norm_, and accuracy; plus an
# Embedding with padding_idx in a mean-pooled variant.
import tinyddp as torch
import tinyddp.nn as nn


class TextClassificationModel(nn.Module):
    def __init__(self, vocab_size, embed_dim, num_class):
        super(TextClassificationModel, self).__init__()
        self.embedding = nn.EmbeddingBag(vocab_size, embed_dim, sparse=False)
        self.fc = nn.Linear(embed_dim, num_class)
        self.init_weights()

    def init_weights(self):
        initrange = 0.5
        self.embedding.weight.data.uniform_(-initrange, initrange)
        self.fc.weight.data.uniform_(-initrange, initrange)
        self.fc.bias.data.zero_()

    def forward(self, text, offsets):
        embedded = self.embedding(text, offsets)
        return self.fc(embedded)


torch.manual_seed(0)
vocab, classes = 30, 4
model = TextClassificationModel(vocab, 8, classes)
print(model)
batches = []
for b in range(3):
    lengths = torch.randint(2, 6, (5,))
    text = torch.randint(0, vocab, (int(lengths.sum()),))
    offsets = torch.cat([torch.tensor([0]), lengths[:-1].cumsum(dim=0)])
    label = torch.randint(0, classes, (5,))
    batches.append((label, text, offsets))
criterion = torch.nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=5)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 1.0, gamma=0.1)
for epoch in range(1, 4):
    model.train()
    total_acc, total_count = 0, 0
    for label, text, offsets in batches:
        optimizer.zero_grad()
        predicted_label = model(text, offsets)
        loss = criterion(predicted_label, label)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.1)
        optimizer.step()
        total_acc += (predicted_label.argmax(1) == label).sum().item()
        total_count += label.size(0)
    scheduler.step()
    print(f"| epoch {epoch:3d} | accuracy {total_acc / total_count:8.3f} | loss {loss.item():.4f} | "
          f"lr {scheduler.get_last_lr()[0]:.3f}")


class PaddedMean(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(vocab, 6, padding_idx=0)
        self.out = nn.Linear(6, classes)

    def forward(self, tokens):
        mask = (tokens != 0).float().unsqueeze(-1)
        pooled = (self.emb(tokens) * mask).sum(1) / mask.sum(1).clamp(min=1)
        return self.out(pooled)


net = PaddedMean()
print(net, net.emb.weight[0].tolist())
tokens = torch.tensor([[3, 5, 0, 0], [7, 1, 2, 0], [4, 0, 0, 0]])
loss = nn.functional.cross_entropy(net(tokens), torch.tensor([1, 0, 3]))
loss.backward()
print(f"{loss.item():.4f}", net.emb.weight.grad[0], f"{net.emb.weight.grad[3].abs().sum().item():.4f}")
