# torch.utils.data past the basics: random_split by counts and by fractions with a seeded generator, Subset and
# ConcatDataset (and `+`), a map-style Dataset returning dicts, an IterableDataset, DataLoader with a collate_fn,
# a batch_sampler, SubsetRandomSampler, WeightedRandomSampler, RandomSampler with replacement, drop_last, shuffle
# with a torch.Generator (two epochs differ, a re-seeded generator repeats), batch_size=None, len() of every loader,
# default_collate over nested structures, and the constructor errors users hit.
import tinyddp as torch
from tinyddp.utils.data import (BatchSampler, ConcatDataset, DataLoader, Dataset, IterableDataset, RandomSampler,
                                SequentialSampler, Subset, SubsetRandomSampler, TensorDataset,
                                WeightedRandomSampler, default_collate, random_split)

torch.manual_seed(0)
X = torch.arange(40, dtype=torch.float32).reshape(20, 2)
y = torch.arange(20) % 3
ds = TensorDataset(X, y)
print("len:", len(ds), "item 3:", ds[3])
print("slice:", ds[2:4])

a, b, c = random_split(ds, [10, 6, 4], generator=torch.Generator().manual_seed(42))
print("split sizes:", len(a), len(b), len(c))
print("split a:", a.indices)
fa, fb = random_split(ds, [0.7, 0.3], generator=torch.Generator().manual_seed(42))
print("fraction split:", len(fa), len(fb), fb.indices)
sub = Subset(ds, [0, 5, 10, 15])
print("subset[1]:", sub[1], "len", len(sub))
cat = ConcatDataset([sub, c])
print("concat:", len(cat), cat.cumulative_sizes, cat[5][1].item())
both = sub + c
print("plus:", type(both).__name__, len(both), both[-1][0].tolist())


class Words(Dataset):
    def __init__(self):
        self.words = ["a", "bb", "ccc", "dd", "e", "fff", "gggg"]

    def __len__(self):
        return len(self.words)

    def __getitem__(self, i):
        w = self.words[i]
        return {"text": w, "ids": torch.tensor([ord(ch) - 96 for ch in w]), "len": len(w)}


def pad_collate(batch):
    lengths = torch.tensor([item["len"] for item in batch])
    out = torch.zeros(len(batch), int(lengths.max()), dtype=torch.long)
    for row, item in enumerate(batch):
        out[row, :item["len"]] = item["ids"]
    return {"text": [item["text"] for item in batch], "ids": out, "len": lengths}


words = Words()
g = torch.Generator().manual_seed(7)
loader = DataLoader(words, batch_size=3, shuffle=True, collate_fn=pad_collate, generator=g)
print("len loader:", len(loader))
print(loader, loader.sampler, words, sep="\n")
for epoch in range(2):
    for batch in loader:
        print(epoch, batch["text"], batch["ids"].tolist(), batch["len"].tolist())
g.manual_seed(7)
print("reseeded:", [b["text"] for b in loader][0])

try:
    next(iter(DataLoader(words, batch_size=2)))
except RuntimeError as e:
    print("RuntimeError:", e)
print("default collate of dicts:", default_collate([{"x": 1, "y": (2.0, "u")}, {"x": 3, "y": (4.0, "v")}]))

bs = BatchSampler(SubsetRandomSampler([1, 3, 5, 7, 9, 11, 13], generator=torch.Generator().manual_seed(3)),
                  batch_size=3, drop_last=False)
bl = DataLoader(ds, batch_sampler=bs)
print("batch_sampler:", len(bs), len(bl), [yb.tolist() for _, yb in bl])
print("sequential batches:", list(BatchSampler(SequentialSampler(range(7)), 3, drop_last=True)))

weights = torch.tensor([0.1, 0.1, 5.0, 0.1, 0.1])
ws = WeightedRandomSampler(weights, num_samples=8, generator=torch.Generator().manual_seed(0))
print("weighted:", list(ws), len(ws))
ws2 = WeightedRandomSampler([0.5, 0.1, 0.2, 0.9, 0.3], num_samples=4, replacement=False,
                            generator=torch.Generator().manual_seed(0))
print("weighted no replacement:", list(ws2))
print("one weighted draw:", list(WeightedRandomSampler(weights, 1, generator=torch.Generator().manual_seed(9))))
rs = RandomSampler(range(5), replacement=True, num_samples=9, generator=torch.Generator().manual_seed(5))
print("random with replacement:", list(rs), len(rs))

dl = DataLoader(ds, batch_size=6, drop_last=True)
print("drop_last:", len(dl), [xb.shape[0] for xb, _ in dl])
dl2 = DataLoader(ds, batch_size=6)
print("keep last:", len(dl2), [xb.shape[0] for xb, _ in dl2])
none_batch = DataLoader(sub, batch_size=None)
print("batch_size=None:", len(none_batch), [yb.item() for _, yb in none_batch])


class Countdown(IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        return iter(range(self.n, 0, -1))


it_loader = DataLoader(Countdown(7), batch_size=3)
print("iterable:", [t.tolist() for t in it_loader])
print("iterable drop_last:", [t.tolist() for t in DataLoader(Countdown(7), batch_size=3, drop_last=True)])

for make in (lambda: DataLoader(ds, batch_size=4, shuffle=True, sampler=SequentialSampler(ds)),
             lambda: DataLoader(ds, batch_size=4, batch_sampler=bs),
             lambda: DataLoader(Countdown(3), shuffle=True),
             lambda: random_split(ds, [10, 5]),
             lambda: WeightedRandomSampler(weights, num_samples=0),
             lambda: ds[25]):
    try:
        make()
        print("no error")
    except (ValueError, IndexError, RuntimeError) as e:
        print(type(e).__name__ + ":", e)
