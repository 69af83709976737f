"""torch.utils.data: datasets, samplers, DistributedSampler, DataLoader and the collate functions, pure Python
over the tensor API, with 1.13's orders, random draws, checks and texts (docs/python.md)."""
from tinyddp.utils.data.sampler import (BatchSampler, RandomSampler, Sampler, SequentialSampler,
                                        SubsetRandomSampler, WeightedRandomSampler)
from tinyddp.utils.data.dataset import (ChainDataset, ConcatDataset, Dataset, IterableDataset, Subset,
                                        TensorDataset, random_split)
from tinyddp.utils.data.distributed import DistributedSampler
from tinyddp.utils.data.dataloader import (DataLoader, _DatasetKind, default_collate, default_convert,
                                           get_worker_info)

__all__ = ["BatchSampler", "ChainDataset", "ConcatDataset", "DataLoader", "Dataset", "DistributedSampler",
           "IterableDataset", "RandomSampler", "Sampler", "SequentialSampler", "Subset", "SubsetRandomSampler",
           "TensorDataset", "WeightedRandomSampler", "_DatasetKind", "default_collate", "default_convert",
           "get_worker_info", "random_split"]
