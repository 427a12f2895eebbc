"""A fake system for testing the icml26 runner: "On the Sample Mean, Considered as an Estimator".

Not a real paper. Its claims are small but real computations: one holds, one fails and one cannot be
measured, so the tests can check every path of the runner, the reports and the CLI.
"""

__all__ = ["sample_mean"]


def sample_mean(values):
    values = list(values)
    if not values:
        raise ValueError("sample_mean needs at least one value")
    return sum(values) / len(values)
