"""Tiny working invocations of every ``icml26 vipo`` verb, mutated by ``tests/cli_harness.py``.

They run in order: ``make-dataset`` writes the dataset the others read, ``train`` the policy ``evaluate`` reads.
"""

EXAMPLES = [
    ["dataset", "--env", "hopper", "--kind", "random", "--transitions", "150", "--seed", "2",
     "--out", "{tmp}/hopper-random", "--json", "{tmp}/hopper.json"],
    ["make-dataset", "--env", "Pendulum-v1", "--quality", "medium", "--transitions", "300", "--seed", "1",
     "--out", "{tmp}/pend.npz"],
    ["train", "--dataset", "{tmp}/pend.npz", "--algo", "mopo+vipo", "--phi", "0.001", "--members", "2", "--elites",
     "1", "--hidden", "8,8", "--model-epochs", "1", "--steps", "4", "--policy-hidden", "8", "--batch", "16",
     "--rollout-length", "2", "--rollout-batch", "20", "--rollout-every", "2", "--real-ratio", "0.5", "--penalty",
     "1.0", "--eval-every", "4", "--eval-episodes", "1", "--last-evals", "1", "--out", "{tmp}/policy.pt",
     "--json", "{tmp}/train.json"],
    ["evaluate", "--policy", "{tmp}/policy.pt", "--dataset", "{tmp}/pend.npz", "--episodes", "1",
     "--json", "{tmp}/eval.json"],
    ["evaluate", "--policy", "{tmp}/policy.pt", "--env", "Pendulum-v1", "--ref-min", "-1200", "--ref-max", "-150",
     "--episodes", "1"],
]  # fmt: skip
