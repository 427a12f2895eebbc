"""Problem sizes of the claims per scale (``smoke`` seconds, ``small`` minutes on one core, ``paper`` the paper's)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Config:
    # simulated subject: a hierarchical semantic space (topics x subtopics) and its layered hidden states
    n_words: int = 400
    n_topics: int = 10
    n_sub: int = 5
    dim: int = 32
    n_layers: int = 12
    # trial counts: FC = cue + 16 candidates, 2 picks, ceil((V-1)/16) trials per shuffle; FA = 5 associates a run.
    # The paper balances responses per cue (313 x 2 = 626 picks vs 126 x 5 = 630 associates); so do we.
    fc_shuffles: int = 4  # 25 trials a shuffle at 400 words -> 200 picks per cue
    fa_runs: int = 40  # -> 200 associates per cue
    n_pairs: int | None = 500_000  # RSA pairs (the paper's sampling; all pairs when fewer exist)
    ks: tuple[int, ...] = (5, 10, 20, 50)
    n_consensus: int = 3  # other simulated 'models' averaged into the cross-model consensus
    ridge_train_pairs: int = 20_000
    # the real-LM experiment (SmolLM2-135M-Instruct, the fast runner); None = not run at this scale
    lm_model: str | None = "smollm2"
    lm_words: int = 1060  # the shipped nouns
    lm_fc_per_cue: int = 4  # FC trials per cue (of 67 in a full shuffle) -> 8 picks per cue
    # FA runs per cue: the even runs are compared with FC, the odd ones are their A/A twin. 47 % of SmolLM2's v1
    # (float32) runs name at least one single-word associate, so 8 runs a half leave ~1 % of cues unanswered in a half
    lm_fa_runs: int = 16
    lm_dtype: str = "bfloat16"  # the trials' weights (hidden states are float32)
    lm_fa_tokens: int = 16
    # FA's sampling and parsing, tuned on behaviour alone (benchmarks/behaviorgeo_fa_tuning.py: vocabulary
    # associates per run, 100 cues, no hidden state): temperature 0.7, nucleus 0.9, multi-word associates counted
    # by their content word -- 1.17 vocabulary associates a run against 0.26 at temperature 1 / whole items
    lm_fa_temperature: float = 0.7
    lm_fa_top_p: float = 0.9
    lm_fa_content_words: bool = True
    lm_batch: int = 32
    lm_boot: int = 200  # paired bootstrap resamples of the evaluation words
    lm_permutations: int = 100  # label permutations for the layer-profile floor
    lm_pairs: int = 100_000  # pairs sampled for the layer profile


PRESETS = {
    "smoke": Config(
        n_words=120, fc_shuffles=2, fa_runs=6, ks=(5, 10, 20), n_consensus=2, ridge_train_pairs=3000, lm_model=None
    ),
    "small": Config(),
    "paper": Config(
        n_words=5000,
        fc_shuffles=1,
        fa_runs=126,
        ks=(5, 10, 20, 50, 100, 200),
        ridge_train_pairs=100_000,
        lm_words=5000,
        lm_fc_per_cue=313,
        lm_fa_runs=126,
        lm_batch=64,
        lm_fa_tokens=32,
        lm_boot=1000,
        lm_permutations=200,
        lm_pairs=500_000,
    ),
}
