"""The tables of docs/gradnorm.md section 4: `tinyddp train` runs over weightings, weight optimizers and model seeds,
summarized as Markdown (metric per step, mean and range over the seeds, clamped updates, CPU time per step).

    python3 bench/gradnorm_tables.py --out /tmp/gn --jobs 2                      # every table (long: see --help)
    python3 bench/gradnorm_tables.py --out /tmp/gn --only toy2 --steps 2000       # one experiment, shorter runs

Each run's `--json` output is kept in --out (a run already there is not repeated), with the CPU seconds of the
process (user + system, from wait4) added as "cpu_s". Plain Python: no torch.
"""
import argparse
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

REPORT_STEPS = [0, 200, 800, 2000, 5000, 10000]
# (label, weighting, extra arguments)
WEIGHTINGS = [
    ("fixed", "fixed", []),
    ("uncertainty", "uncertainty", []),
    ("gradnorm, Adam", "gradnorm", ["--weights-optimizer", "adam"]),
    ("gradnorm, SGD", "gradnorm", ["--weights-optimizer", "sgd"]),
]
# Per experiment, rows beyond WEIGHTINGS: on toy2, SGD with a step size matched to its gradient norms.
EXTRA = {"toy2": [("gradnorm, SGD, lr 1e-4", "gradnorm", ["--weights-optimizer", "sgd", "--lr-weights", "1e-4"])]}


def run_timed(binary, out_dir, experiment, weighting, extra, seed, steps):
    """As run_one, with the process's own CPU seconds (os.wait4) in "cpu_s"."""
    name = "_".join([experiment, weighting, *[a.lstrip("-") for a in extra], f"seed{seed}", f"steps{steps}"])
    path = os.path.join(out_dir, name + ".json")
    if os.path.exists(path):
        with open(path) as f:
            return json.load(f)
    report = ",".join(str(s) for s in REPORT_STEPS if s <= steps)
    cmd = [binary, "train", "--experiment", experiment, "--weighting", weighting, "--seed", str(seed), "--steps",
           str(steps), "--report-steps", report, "--json", "--quiet", *extra]
    out_path = path + ".tmp"
    with open(out_path, "w") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed with status {status}")
    with open(out_path) as f:
        result = json.load(f)
    os.remove(out_path)
    result["cpu_s"] = usage.ru_utime + usage.ru_stime
    with open(path, "w") as f:
        json.dump(result, f)
    return result


def metric_at(result, step):
    for row in result["report"]:
        if row["step"] == step:
            return row["metric"]
    return None


def summary(values):
    values = [v for v in values if v is not None]
    if not values:
        return ""
    mean = sum(values) / len(values)
    if len(values) == 1:
        return f"{mean:.3f}"
    return f"{mean:.3f} ({min(values):.3f}–{max(values):.3f})"


def table(title, rows, seeds, steps):
    """rows: (label, [result per seed])."""
    shown = [s for s in REPORT_STEPS if 0 < s <= steps]
    lines = [f"#### {title}", "", "| weighting | " + " | ".join(f"metric @{s}" for s in shown) +
             " | clamped updates | w at the end (normalized) | CPU ms/step |",
             "| --- | " + " | ".join("---" for _ in shown) + " | --- | --- | --- |"]
    for label, results in rows:
        cells = [summary([metric_at(r, s) for r in results]) for s in shown]
        clamped = " / ".join(str(r["clamped_updates"]) for r in results)
        w = results[0]["weights_normalized"]
        w_text = "/".join(f"{v:.3f}" for v in w) if len(w) <= 2 else "see below"
        cpu = [r["cpu_s"] * 1000 / r["steps"] for r in results if r.get("cpu_s")]
        lines.append(f"| {label} | " + " | ".join(cells) + f" | {clamped} | {w_text} (seed {seeds[0]}) | "
                     f"{summary(cpu) if cpu else ''} |")
    return "\n".join(lines)


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--tinyddp", default=os.path.join(root, "build", "apps", "tinyddp"))
    p.add_argument("--out", required=True, help="directory for the runs' JSON")
    p.add_argument("--only", action="append", help="toy2, toy10, recsys or freeze (repeatable; default: all)")
    p.add_argument("--steps", type=int, default=10000)
    p.add_argument("--seeds", default="1,2,3")
    p.add_argument("--freeze", default="200,500", help="K of the --freeze-after runs (2000 steps)")
    p.add_argument("--freeze-on", default="toy2,toy10", help="experiments of the --freeze-after runs")
    p.add_argument("--jobs", type=int, default=2)
    a = p.parse_args()
    os.makedirs(a.out, exist_ok=True)
    seeds = [int(s) for s in a.seeds.split(",")]
    only = a.only or ["toy2", "toy10", "recsys", "freeze"]
    jobs = []
    for experiment in ("toy2", "toy10", "recsys"):
        if experiment in only:
            for label, weighting, extra in WEIGHTINGS + EXTRA.get(experiment, []):
                for seed in seeds:
                    jobs.append((experiment, weighting, extra, seed, a.steps))
    freeze_on = a.freeze_on.split(",")
    if "freeze" in only:
        for experiment in freeze_on:
            for seed in seeds:
                jobs.append((experiment, "fixed", [], seed, 2000))
                jobs.append((experiment, "gradnorm", ["--weights-optimizer", "adam"], seed, 2000))
                for k in a.freeze.split(","):
                    jobs.append((experiment, "gradnorm", ["--weights-optimizer", "adam", "--freeze-after", k], seed,
                                 2000))
    with ThreadPoolExecutor(a.jobs) as pool:
        results = list(pool.map(lambda j: run_timed(a.tinyddp, a.out, *j), jobs))
    by_key = {(j[0], j[1], tuple(j[2]), j[3], j[4]): r for j, r in zip(jobs, results)}

    for experiment in ("toy2", "toy10", "recsys"):
        if experiment not in only:
            continue
        rows = [(label, [by_key[(experiment, w, tuple(extra), s, a.steps)] for s in seeds])
                for label, w, extra in WEIGHTINGS + EXTRA.get(experiment, [])]
        print(table(f"{experiment}: {a.steps} steps, seeds {a.seeds}", rows, seeds, a.steps), "\n")
        adam = rows[2][1][0]
        print(f"{experiment} gradnorm/Adam final weights (seed {seeds[0]}):",
              " ".join(f"{v:.3f}" for v in adam["weights_normalized"]), "\n")
    if "freeze" in only:
        for experiment in freeze_on:
            rows = [("fixed", [by_key[(experiment, "fixed", (), s, 2000)] for s in seeds]),
                    ("gradnorm, Adam, throughout",
                     [by_key[(experiment, "gradnorm", ("--weights-optimizer", "adam"), s, 2000)] for s in seeds])]
            for k in a.freeze.split(","):
                rows.append((f"gradnorm, Adam, --freeze-after {k}",
                             [by_key[(experiment, "gradnorm", ("--weights-optimizer", "adam", "--freeze-after", k), s,
                                      2000)] for s in seeds]))
            print(table(f"{experiment}: freeze after K, 2000 steps, seeds {a.seeds}", rows, seeds, 2000), "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
