"""``icml26 zolangevin sample | train-prior | invert``: thin verbs over the library."""

from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path

import numpy as np

from .diagnostics import imq_ksd, mode_balance, relative_fisher, variance_bias
from .samplers import SAMPLERS, run_sampler
from .targets import make_target


def _positive(kind):
    def parse(text):
        try:
            value = kind(float(text))
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
        if value <= 0:
            raise argparse.ArgumentTypeError(f"must be positive, got {text}")
        return value

    return parse


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="icml26 zolangevin", description="variance-reduced zeroth-order Langevin sampling and ZO-APMC"
    )
    sub = parser.add_subparsers(dest="verb", required=True)

    p = sub.add_parser("sample", help="sample a built-in target with a query budget and report diagnostics")
    p.add_argument(
        "--target", default="gmm:d=10", help="gmm:d=50[,sep=2.5,w=0.5] | banana:d=2 | double-well:d=5[,tilt=0.3]"
    )
    p.add_argument("--sampler", default="vr-zo", choices=SAMPLERS)
    p.add_argument("--queries", type=_positive(float), default=1e6, help="total query budget over all chains")
    p.add_argument("--chains", type=_positive(int), default=200)
    p.add_argument("--step", type=float, default=None, help="step size h (default 1/d)")
    p.add_argument("--b", type=_positive(int), default=4, help="directions per ZO step")
    p.add_argument("--q", type=_positive(int), default=4, help="refresh period of vr-zo")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", type=Path, help="save the final states as .npy")

    p = sub.add_parser("train-prior", help="train the score prior by denoising score matching")
    p.add_argument("--data", default="mnist", choices=("mnist", "fashion-mnist", "shapes"))
    p.add_argument("--size", type=_positive(int), default=14)
    p.add_argument("--steps", type=_positive(int), default=4000)
    p.add_argument("--width", type=_positive(int), default=256)
    p.add_argument("--arch", default="mlp", choices=("mlp", "unet"))
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", type=Path, required=True, help="output .pt file")

    p = sub.add_parser("invert", help="posterior sampling for an image inverse problem with a black-box forward model")
    p.add_argument("--problem", default="blur-subsample", choices=("blur-subsample", "blur-clip", "fourier-magnitude"))
    p.add_argument("--prior", type=Path, required=True, help="a prior trained with train-prior")
    p.add_argument("--image", type=Path, help=".npy or .png image (default: a test image of the prior's data set)")
    p.add_argument("--method", default="vr-zo", choices=("vr-zo", "zo", "oracle", "enkg"))
    p.add_argument("--chains", type=_positive(int), default=16)
    p.add_argument("--sigma-y", type=_positive(float), default=0.05)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", type=Path, help="save samples, mean and std as .npz")
    return parser


def main(argv) -> int:
    args = _parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    rng = np.random.default_rng(args.seed)
    if args.verb == "sample":
        target = make_target(args.target)
        step = args.step if args.step is not None else 1.0 / target.dim
        if not step > 0:
            raise ValueError(f"--step must be positive, got {step}")
        x0 = rng.standard_normal((args.chains, target.dim))
        res = run_sampler(
            args.sampler, target, x0, step=step, query_budget=args.queries / args.chains, b=args.b, q=args.q, rng=rng
        )
        x = res.final
        report = {
            "sampler": args.sampler,
            "target": args.target,
            "steps": res.n_steps,
            "queries_per_chain": res.queries,
            "grad_evals_per_chain": res.grad_evals,
            "ksd_imq": imq_ksd(x, target.score(x)),
            "relative_fisher_kde": relative_fisher(x, target.score(x)),
            "variance_bias": variance_bias(x, target.var),
            "mode_tv": mode_balance(target.mode_probabilities(x), target.mode_weights),
        }
        if args.out:
            np.save(args.out, x)
        print(json.dumps(report, indent=1))
        return 0
    if args.verb == "train-prior":
        from .data import load_images
        from .prior import train_score_prior

        images = load_images(args.data, size=args.size)
        prior = train_score_prior(
            images, n_steps=args.steps, width=args.width, arch=args.arch, seed=args.seed, data=args.data
        )
        prior.save(args.out)
        print(json.dumps({"out": str(args.out), "final_loss": prior.final_loss_, "size": args.size}))
        return 0
    # invert
    from .apmc import InverseProblem, coverage, make_forward, psnr, ssim, zo_apmc
    from .data import load_images, load_user_image
    from .prior import ScorePrior

    prior = ScorePrior.load(args.prior)
    if args.image is not None:
        truth = load_user_image(args.image, prior.size)
    else:
        data = prior.data if prior.data in ("mnist", "fashion-mnist", "shapes") else "shapes"
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
    }
    if args.out:
        np.savez(
            args.out,
            samples=res.samples.reshape(-1, prior.size, prior.size),
            mean=res.mean.reshape(prior.size, prior.size),
            std=res.std.reshape(prior.size, prior.size),
            truth=truth,
        )
    print(json.dumps(report, indent=1))
    return 0
