"""The tables of docs/multitask.md: `tinyddp train` over the loss weightings and the gradient-surgery methods,
3 model seeds each, summarized as Markdown (the held-out metric sum_i L_i/L_i(0) at the last step: mean and
range over the seeds; wall seconds per run; on conflict2 also the cosine between the two tasks' gradients on W
at step 0 and at the last step, from --grad-report).

    python3 bench/multitask_tables.py --out build/multitask                    # conflict2 (1000 steps) and toy2 (500)
    python3 bench/multitask_tables.py --out build/multitask --only conflict2 --steps 300

Each run's `--json` output is kept in --out (a run already there is not repeated). Plain Python: no torch.
"""
import argparse
import json
import os
import subprocess
import time

WEIGHTINGS = ["fixed", "uncertainty", "gradnorm", "pcgrad", "mgda"]
EXPERIMENTS = {"conflict2": 1000, "toy2": 500}   # steps: short runs on a shared 2-core machine
SEEDS = [1, 2, 3]


def run_one(binary, out_dir, experiment, weighting, seed, steps):
    path = os.path.join(out_dir, f"{experiment}_{weighting}_seed{seed}_steps{steps}.json")
    if os.path.exists(path):
        with open(path) as f:
            return json.load(f)
    cmd = [binary, "train", "--experiment", experiment, "--weighting", weighting, "--seed", str(seed),
           "--steps", str(steps), "--grad-report", f"0,{steps - 1}", "--json", "--quiet"]
    start = time.monotonic()
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    result = json.loads(out)
    result["wall_s"] = time.monotonic() - start
    with open(path, "w") as f:
        json.dump(result, f)
    return result


def cosine_on_w(result, index):
    report = result["grad_report"][index]
    return report["cosine"][0][1]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", default="build/apps/tinyddp")
    ap.add_argument("--out", required=True)
    ap.add_argument("--only", choices=sorted(EXPERIMENTS))
    ap.add_argument("--steps", type=int, help="override every experiment's step count")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    for experiment, steps in EXPERIMENTS.items():
        if args.only and experiment != args.only:
            continue
        steps = args.steps or steps
        print(f"\n{experiment}, {steps} steps, seeds {SEEDS}: metric sum_i L_i/L_i(0) on held-out data (lower is "
              f"better), final test losses, cos(g_0, g_1) on W at steps 0 and {steps - 1} (seed 1)\n")
        print("| weighting | metric mean | min - max | test L_0 (mean) | test L_1 (mean) | cos step 0 | cos last | s per run |")
        print("| --- | --- | --- | --- | --- | --- | --- | --- |")
        for w in WEIGHTINGS:
            runs = [run_one(args.binary, args.out, experiment, w, s, steps) for s in SEEDS]
            m = [r["metric"] for r in runs]
            l0 = sum(r["final_test_losses"][0] for r in runs) / len(runs)
            l1 = sum(r["final_test_losses"][1] for r in runs) / len(runs)
            wall = sorted(r["wall_s"] for r in runs)[len(runs) // 2]
            print(f"| {w} | {sum(m) / len(m):.4f} | {min(m):.4f} - {max(m):.4f} | {l0:.4g} | {l1:.4g} | "
                  f"{cosine_on_w(runs[0], 0):+.3f} | {cosine_on_w(runs[0], 1):+.3f} | {wall:.1f} |")


if __name__ == "__main__":
    main()
