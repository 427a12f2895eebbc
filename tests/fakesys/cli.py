"""``icml26 fakesys mean 1 2 3``: the fake system's one verb."""

import argparse

from fakesys import sample_mean


def main(argv):
    parser = argparse.ArgumentParser(prog="icml26 fakesys", description="fake system for tests")
    sub = parser.add_subparsers(dest="verb", required=True)
    p = sub.add_parser("mean", help="print the sample mean")
    p.add_argument("values", nargs="*", type=float)
    args = parser.parse_args(argv)
    print(sample_mean(args.values))
    return 0
