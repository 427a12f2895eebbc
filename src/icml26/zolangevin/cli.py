"""``icml26 zolangevin sample | train-prior | invert``: thin verbs over the library."""

from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path

import numpy as np

from icml26._util.cli import ArgumentParser, add_json_argument, bounded_int, positive_float, seed_int
from icml26._util.device import add_device_arguments, apply_device_arguments
from icml26._util.io import check_json_output, check_output_path, save_npy, save_npz, write_json

from .data import TEST_PHOTOS
from .diagnostics import imq_ksd, mode_balance, relative_fisher, variance_bias
from .samplers import SAMPLERS, run_sampler
from .targets import make_target

SEED = seed_int  # the shared 32-bit seed type
#: total queries over all chains; a vectorised query costs ~0.1-1 us, so 1e10 is minutes to an hour
MAX_QUERIES = 1e10
#: Langevin steps the budget may buy (each step is a few vectorised array operations)
MAX_STEPS = 5_000_000
#: chains x directions x d float64 entries allocated per zeroth-order step (~800 MB)
MAX_STEP_ENTRIES = 100_000_000


#: largest step size h: the built-in targets have O(1)-O(100) scales, so h > 10 can only diverge
MAX_STEP = 10.0
#: largest measurement noise: images lie in [0, 1], so sigma_y > 10 leaves no information in y
MAX_SIGMA_Y = 10.0
#: |x| above this in a built-in target's final states is a diverged chain (their modes lie within ~100)
CLI_DIVERGED = 1e6


def _at_most(limit: float, what: str):
    def parse(text: str) -> float:
        value = positive_float(text)
        if value > limit:
            raise argparse.ArgumentTypeError(f"{text!r} must be at most {limit:g} ({what})")
        return value

    return parse


def _queries(text: str) -> float:
    value = positive_float(text)
    if value > MAX_QUERIES:
        raise argparse.ArgumentTypeError(f"{text!r} must be at most {MAX_QUERIES:.0e} (total query budget)")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(
        prog="icml26 zolangevin", description="variance-reduced zeroth-order Langevin sampling and ZO-APMC"
    )
    sub = parser.add_subparsers(dest="verb", required=True)

    p = sub.add_parser(
        "sample",
        help="sample a built-in target with a query budget and report diagnostics",
        description="Reads nothing; runs the chosen Langevin sampler on a built-in target (--target) within the "
        "query budget, prints the diagnostics (KSD, relative Fisher, variance bias, mode balance) as JSON and "
        "optionally writes the final states as .npy (--out). Example: icml26 zolangevin sample --target gmm:d=10 "
        "--sampler vr-zo --queries 1e6 --chains 200 --out states.npy",
    )
    p.add_argument(
        "--target", default="gmm:d=10", help="gmm:d=50[,sep=2.5,w=0.5] | banana:d=2 | double-well:d=5[,tilt=0.3]"
    )
    p.add_argument("--sampler", default="vr-zo", choices=SAMPLERS, help="ula/mala use exact gradients")
    p.add_argument("--queries", type=_queries, default=1e6, help="total query budget over all chains (never exceeded)")
    p.add_argument(
        "--chains", type=bounded_int(1, 100_000, what="chains"), default=200, help="number of parallel chains"
    )
    p.add_argument(
        "--step",
        type=_at_most(MAX_STEP, "larger steps diverge on every built-in target"),
        default=None,
        help="step size h (default 1/d)",
    )
    p.add_argument("--b", type=bounded_int(1, 100_000, what="directions"), default=4, help="directions per ZO step")
    p.add_argument(
        "--q", type=bounded_int(1, 1_000_000, what="refresh period"), default=4, help="refresh period of vr-zo"
    )
    p.add_argument("--seed", type=SEED, default=0, help="random seed")
    p.add_argument("--out", type=Path, help="save the final states as .npy (to exactly this file)")
    add_json_argument(p, "the report (also printed)")

    p = sub.add_parser(
        "train-prior",
        help="train the score prior by denoising score matching",
        description="Reads training images (--data, from --data-root or the installed package), trains a score "
        "network by denoising score matching, writes it (--out, .pt) and prints the final loss as JSON. Example: "
        "icml26 zolangevin train-prior --data mnist --size 14 --steps 4000 --out prior.pt",
    )
    p.add_argument(
        "--data",
        default="mnist",
        choices=("mnist", "fashion-mnist", "photos", "shapes"),
        help="training images ('photos': random crops of scikit-image's bundled photographs, disjoint from the "
        "test photos)",
    )
    p.add_argument(
        "--data-root",
        help="folder with the data set's IDX files (train-images-idx3-ubyte[.gz]); the installed package if absent",
    )
    p.add_argument("--size", type=bounded_int(4, 64, what="image side"), default=14, help="image side in pixels")
    p.add_argument(
        "--steps",
        type=bounded_int(1, 200_000, what="training steps; ~16 ms each for the default MLP"),
        default=4000,
        help="training steps (progress is logged every 500)",
    )
    p.add_argument("--width", type=bounded_int(1, 4096, what="network width"), default=256, help="hidden units")
    p.add_argument("--arch", default="mlp", choices=("mlp", "unet"), help="score network")
    p.add_argument("--seed", type=SEED, default=0, help="random seed")
    p.add_argument("--out", type=Path, required=True, help="output .pt file")
    add_json_argument(p, "the final loss (also printed)")

    p = sub.add_parser(
        "invert",
        help="posterior sampling for an image inverse problem with a black-box forward model",
        description="Reads a prior written by train-prior and a ground-truth image (--image, --photo or a test "
        "image of the prior's data set), simulates noisy measurements, samples the posterior with ZO-APMC, prints "
        "PSNR, SSIM and 90% coverage as JSON and optionally writes samples, mean and std as .npz (--out). Example: "
        "icml26 zolangevin invert --prior prior.pt --problem blur-subsample --method vr-zo --chains 16 --out post.npz",
    )
    p.add_argument(
        "--problem",
        default="blur-subsample",
        choices=("blur-subsample", "blur-clip", "fourier-magnitude"),
        help="forward model",
    )
    p.add_argument("--prior", type=Path, required=True, help="a prior trained with train-prior")
    p.add_argument("--image", type=Path, help=".npy or .png image (default: a test image of the prior's data set)")
    p.add_argument(
        "--photo",
        choices=sorted(TEST_PHOTOS),
        help="ground truth: a photograph bundled with scikit-image (public domain / CC0), at the prior's size",
    )
    p.add_argument("--method", default="vr-zo", choices=("vr-zo", "zo", "oracle", "enkg"), help="posterior sampler")
    p.add_argument("--chains", type=bounded_int(1, 10_000, what="chains"), default=16, help="posterior samples")
    p.add_argument(
        "--sigma-y",
        type=_at_most(MAX_SIGMA_Y, "images lie in [0, 1]; noise this large leaves nothing to invert"),
        default=0.05,
        help="measurement noise level",
    )
    p.add_argument("--seed", type=SEED, default=0, help="random seed")
    p.add_argument("--out", type=Path, help="save samples, mean and std as .npz (to exactly this file)")
    add_json_argument(p, "the report (also printed)")
    for verb in ("train-prior", "invert"):  # the score network trains and answers queries on --device
        add_device_arguments(sub.choices[verb])
    return parser


def main(argv) -> int:
    args = build_parser().parse_args(argv)
    if hasattr(args, "device"):
        args.device = str(apply_device_arguments(args))  # threads set; an unknown or absent device refused here
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    try:
        return _run(args)
    except FloatingPointError as exc:  # a diverged chain is bad input (too large a step), not a crash
        raise ValueError(str(exc)) from None


def _run(args) -> int:
    if getattr(args, "out", None) is not None:
        check_output_path(args.out)
    check_json_output(args.json)
    rng = np.random.default_rng(args.seed)
    if args.verb == "sample":
        return _sample(args, rng)
    if args.verb == "train-prior":
        from .data import load_images
        from .prior import train_score_prior

        images = load_images(args.data, size=args.size, root=args.data_root)
        prior = train_score_prior(
            images,
            n_steps=args.steps,
            width=args.width,
            arch=args.arch,
            seed=args.seed,
            data=args.data,
            device=args.device,
        )
        prior.save(args.out)
        report = {"out": str(args.out), "final_loss": prior.final_loss_, "size": args.size}
        print(json.dumps(report))
        write_json(args.json, report)
        return 0
    return _invert(args, rng)


def _sample(args, rng) -> int:
    target = make_target(args.target)
    d = target.dim
    zeroth_order = args.sampler in ("zo", "vr-zo")
    per_step = args.chains * (2 * args.b if zeroth_order else 2) * d
    if per_step > MAX_STEP_ENTRIES:
        raise ValueError(
            f"--chains {args.chains} x 2*--b {args.b} x d {d} = {per_step:,} array entries per step; "
            f"at most {MAX_STEP_ENTRIES:,} (about 800 MB)"
        )
    per_chain = args.queries / args.chains
    min_step_cost = {"zo": args.b + 1, "vr-zo": min(2 * args.b + 1, d + 1)}.get(args.sampler, 1)
    if per_chain / min_step_cost > MAX_STEPS:
        raise ValueError(
            f"--queries {args.queries:g} buys up to {per_chain / min_step_cost:,.0f} steps per chain; "
            f"at most {MAX_STEPS:,}: lower --queries or raise --chains / --b"
        )
    step = args.step if args.step is not None else 1.0 / d
    x0 = rng.standard_normal((args.chains, d))
    res = run_sampler(args.sampler, target, x0, step=step, query_budget=per_chain, b=args.b, q=args.q, rng=rng)
    x = res.final
    if np.abs(x).max() > CLI_DIVERGED:  # the library stops at 1e30; the built-in targets live within ~100
        bad = int((np.abs(x).max(1) > CLI_DIVERGED).sum())
        raise ValueError(
            f"{bad} chain(s) diverged (|x| > {CLI_DIVERGED:.0e}); the step size h={step:.3g} is too large for "
            f"{args.target}"
        )
    report = {
        "sampler": args.sampler,
        "target": args.target,
        "steps": res.n_steps,
        "query_budget_per_chain": per_chain,
        "queries_per_chain": res.queries,
        "grad_evals_per_chain": res.grad_evals,
        "ksd_imq": imq_ksd(x, target.score(x)),
        "relative_fisher_kde": relative_fisher(x, target.score(x)),
        "variance_bias": variance_bias(x, target.var),
        "mode_tv": mode_balance(target.mode_probabilities(x), target.mode_weights),
    }
    if args.out:
        save_npy(args.out, x)
    print(json.dumps(report, indent=1))
    write_json(args.json, report)
    return 0


def _invert(args, rng) -> int:
    from .apmc import InverseProblem, coverage, make_forward, psnr, ssim, zo_apmc
    from .data import load_images, load_photo, load_user_image
    from .prior import ScorePrior

    prior = ScorePrior.load(args.prior, device=args.device)
    if args.chains * prior.size**2 > MAX_STEP_ENTRIES // 10:
        raise ValueError(
            f"--chains {args.chains} x {prior.size}x{prior.size} pixels is too large; "
            f"at most {MAX_STEP_ENTRIES // 10:,} chain-pixels"
        )
    if args.image is not None and args.photo is not None:
        raise ValueError("pass --image or --photo, not both")
    if args.image is not None:
        truth = load_user_image(args.image, prior.size)
    elif args.photo is not None:
        truth = load_photo(args.photo, prior.size)
    else:
        data = prior.data if prior.data in ("mnist", "fashion-mnist", "photos", "shapes") else "shapes"
        truth = load_images(data, split="test", size=prior.size, n=1, rng=rng)[0]
    problem = InverseProblem.simulate(make_forward(args.problem, prior.size), truth, args.sigma_y, rng)
    res = zo_apmc(
        problem,
        prior,
        method=args.method,
        n_chains=args.chains,
        sigma_range=(prior.sigma_max, max(prior.sigma_min, 0.03)),
        rng=rng,
    )
    report = {
        "method": args.method,
        "forward_queries_per_chain": res.queries,
        "psnr_db": psnr(res.mean, truth.ravel()),
        "ssim": ssim(res.mean, truth, prior.size),
        "coverage_90": coverage(res.samples, truth),
        "truth": args.photo or (str(args.image) if args.image else f"a test image of {prior.data!r}"),
    }
    if args.out:
        save_npz(
            args.out,
            samples=res.samples.reshape(-1, prior.size, prior.size),
            mean=res.mean.reshape(prior.size, prior.size),
            std=res.std.reshape(prior.size, prior.size),
            truth=truth,
        )
    print(json.dumps(report, indent=1))
    write_json(args.json, report)
    return 0
