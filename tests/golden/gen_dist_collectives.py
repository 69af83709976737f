"""dist_collectives.json: tests/golden/dist_collectives_cases.py run by real PyTorch 1.13 gloo on 2 and 3 forked
processes, every rank's results (values, and "Type: message" for bad input) in rank order. tinyddp's
test_dist_collectives.py runs the same cases on its rank threads and compares.

    /usr/bin/python3 tests/golden/gen_dist_collectives.py
"""
import datetime
import os
import traceback

import torch
import torch.distributed as dist

from dist_collectives_cases import run_cases
from gen_tdp_params import here, run_ranks, write_json

WORLDS = (2, 3)
TIMEOUT_S = 120


def rank_main(world):
    def main(rank, port):
        os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), GLOO_SOCKET_IFNAME="lo")
        torch.set_num_threads(1)
        dist.init_process_group("gloo", rank=rank, world_size=world, timeout=datetime.timedelta(seconds=60))
        try:
            out = run_cases(torch, dist, rank, world)
        except BaseException:
            traceback.print_exc()   # run_ranks reports only that the rank failed
            raise
        dist.destroy_process_group()
        return out
    return main


def main():
    result = {"generator": "gen_dist_collectives.py", "torch_version": torch.__version__,
              "worlds": {str(w): run_ranks(rank_main(w), w, TIMEOUT_S) for w in WORLDS}}
    write_json(result, here("dist_collectives.json"))


if __name__ == "__main__":
    main()
