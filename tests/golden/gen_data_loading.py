"""Golden data: torch.utils.data in PyTorch 1.13 -> data_loading.json.

The cases are data_loading_cases.py's, which tests/python/test_data.py replays with tinyddp: datasets,
random_split (integer and fractional lengths, their warnings and errors), the samplers (RandomSampler with and
without replacement and generator, WeightedRandomSampler with replacement), DistributedSampler for several
sizes, ranks, epochs and drop_last, DataLoader batches with and without shuffle and generator, the default
streams' next values after each (torch's, `random`'s, NumPy's), default_collate and default_convert of nested
structures, 1.13's error texts, and workers (num_workers > 0, run here as processes) with their seeds.
Run by hand, then commit data_loading.json (about 10 s; the output is deterministic):
    /usr/bin/python3 tests/golden/gen_data_loading.py
"""
import sys

import numpy as np
import torch
from torch.utils.data._utils.worker import _generate_state

sys.dont_write_bytecode = True  # keep __pycache__ out of tests/golden
from gen_tdp_params import here, write_json  # noqa: E402
import data_loading_cases  # noqa: E402


def check_numpy_seed():
    """tinyddp seeds a worker's NumPy with NumPy's own SeedSequence, which 1.13's _generate_state writes out."""
    for base_seed in (0, 1, 2 ** 32 + 7, 2 ** 63 - 1, 883951781600517636):
        for worker_id in (0, 1, 5):
            entropy = [worker_id, base_seed & 0xFFFFFFFF, base_seed >> 32, 0]
            assert np.random.SeedSequence(entropy).generate_state(4).tolist() == \
                _generate_state(base_seed, worker_id), (base_seed, worker_id)


def main():
    check_numpy_seed()
    out = {"torch_version": torch.__version__}
    out.update(data_loading_cases.run_all(torch))
    write_json(out, here("data_loading.json"))


if __name__ == "__main__":
    main()
