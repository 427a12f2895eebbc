"""``icml26 fakesys mean 1 2 3``: the fake system's one verb."""

from icml26._util.cli import ArgumentParser, finite_float


def build_parser() -> ArgumentParser:
    parser = ArgumentParser(prog="icml26 fakesys", description="fake system for tests")
    sub = parser.add_subparsers(dest="verb", required=True)
    p = sub.add_parser("mean", help="print the sample mean")
    p.add_argument("values", nargs="*", type=finite_float, help="the numbers to average")
    return parser


def main(argv):
    from fakesys import sample_mean

    args = build_parser().parse_args(argv)
    print(sample_mean(args.values))
    return 0
