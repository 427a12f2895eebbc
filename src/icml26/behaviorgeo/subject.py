"""A deterministic simulated subject with ground truth: a hierarchical semantic space, a layered hidden-state
model of it, and the two paradigms' response processes (forced choice, free association).

Both paradigms read the *same* latent space ``s`` (the subject's semantics); they differ only in how a response
is produced, so nothing here decides which paradigm recovers the geometry better:

- forced choice (FC): the 16 candidates of a trial are compared *jointly*; the 2 picked are the top-2 of
  ``beta_fc * cos(s_cue, s_cand) + Gumbel noise`` (a Luce choice among the candidates);
- free association (FA): 5 associates are drawn *without replacement* from the whole vocabulary with
  probabilities ``softmax(beta_fa * cos(s_cue, s_w) + alpha * log freq_w)`` (Gumbel top-k), so frequent words
  intrude whatever the cue (frequency bias) -- with ``alpha = 0`` and a large ``beta_fa`` FA reads the nearest
  neighbours directly and can beat FC.

The hidden states of layer ``l`` mix the semantics with a word-form code (``c_l`` rising then falling with
depth), add a large common offset (anisotropy: mean-centring is needed) and noise. The cross-model
"consensus" is other subjects that share the world's semantics ``z`` but not this subject's idiosyncratic part.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["SemanticWorld", "SimulatedSubject", "fc_trials"]


def fc_trials(
    n_words: int, n_candidates: int = 16, shuffles: int = 1, seed: int = 0, cues: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Forced-choice trial design: for each cue and each shuffle, a seeded permutation of the *other* words cut
    into consecutive sets of ``n_candidates`` (the last set topped up from the permutation's start), so every
    word is a candidate for every cue once per shuffle: ``ceil((n - 1) / n_candidates)`` trials per cue and
    shuffle (313 for the paper's 5,000 words and 16 candidates).

    Returns ``cue`` (T,) and ``candidates`` (T, n_candidates), in a deterministic order.
    """
    if n_words < n_candidates + 1:
        raise ValueError(f"{n_words} words are too few for {n_candidates} candidates per trial")
    per = -(-(n_words - 1) // n_candidates)
    cue_list = np.arange(n_words) if cues is None else np.asarray(cues, dtype=np.int64).ravel()
    if np.any(cue_list < 0) or np.any(cue_list >= n_words):
        raise ValueError(f"cue indices must lie in [0, {n_words})")
    cue_out = np.empty(len(cue_list) * shuffles * per, np.int64)
    cand_out = np.empty((len(cue_out), n_candidates), np.int64)
    t = 0
    for c in cue_list:
        others = np.delete(np.arange(n_words), c)
        for r in range(shuffles):
            perm = np.random.default_rng([seed, int(c), r]).permutation(others)
            padded = np.concatenate([perm, perm[: per * n_candidates - len(perm)]])
            block = padded.reshape(per, n_candidates)
            cue_out[t : t + per] = c
            cand_out[t : t + per] = block
            t += per
    return cue_out, cand_out


def _unit(X: np.ndarray) -> np.ndarray:
    return X / np.linalg.norm(X, axis=-1, keepdims=True)


@dataclass
class SemanticWorld:
    """The shared semantics ``z`` (n_words, dim): topic + subtopic + word parts, plus Zipf word frequencies."""

    z: np.ndarray  # (V, dim)
    topic: np.ndarray  # (V,)
    subtopic: np.ndarray  # (V,)
    freq: np.ndarray  # (V,) Zipf probabilities, shuffled across the hierarchy

    @classmethod
    def make(cls, n_words: int, n_topics: int = 10, n_sub: int = 5, dim: int = 32, seed: int = 0) -> SemanticWorld:
        if n_words < 2 or n_topics < 1 or n_sub < 1 or dim < 1:
            raise ValueError(f"a world needs >= 2 words and positive sizes; got {n_words} words, {n_topics} topics, "
                             f"{n_sub} subtopics, dim {dim}")  # fmt: skip
        rng = np.random.default_rng(seed)
        topic = rng.integers(0, n_topics, n_words)
        subtopic = topic * n_sub + rng.integers(0, n_sub, n_words)
        t_vec = rng.normal(size=(n_topics, dim))
        s_vec = 0.8 * rng.normal(size=(n_topics * n_sub, dim))
        w_vec = 0.7 * rng.normal(size=(n_words, dim))
        z = t_vec[topic] + s_vec[subtopic] + w_vec
        freq = 1.0 / np.arange(1, n_words + 1)
        freq = rng.permutation(freq / freq.sum())
        return cls(z=z, topic=topic, subtopic=subtopic, freq=freq)

    @property
    def n_words(self) -> int:
        return self.z.shape[0]


@dataclass
class SimulatedSubject:
    """One simulated 'model': its semantics ``s = z + idiosyncrasy * delta`` and its behaviour and hidden states.

    ``random_responses=True`` is the control subject: it answers both paradigms uniformly at random.
    ``response_stream`` picks the Gumbel noise of the answers (0: the subject's own; another value: the same
    subject, same semantics and hidden states, answering again with independent noise -- an A/A twin)."""

    world: SemanticWorld
    seed: int = 0
    idiosyncrasy: float = 0.6
    beta_fc: float = 8.0
    beta_fa: float = 8.0
    alpha_fa: float = 1.0
    n_layers: int = 12
    hidden_dim: int = 64
    hidden_noise: float = 0.5
    random_responses: bool = False
    response_stream: int = 0

    def __post_init__(self) -> None:
        rng = np.random.default_rng([self.seed, 1])
        V, dim = self.world.z.shape
        self.s = self.world.z + self.idiosyncrasy * rng.normal(size=(V, dim)) * self.world.z.std()  # (V, dim)
        self._s_unit = _unit(self.s)
        self._rng = np.random.default_rng([self.seed, 2] + [self.response_stream] * (self.response_stream != 0))

    @property
    def n_words(self) -> int:
        return self.world.n_words

    def semantic_similarity(self) -> np.ndarray:
        """The subject's true geometry: cosine of ``s`` (V, V)."""
        return self._s_unit @ self._s_unit.T

    # ----------------------------------------------------------------------------------------- hidden states
    def layer_mixing(self) -> np.ndarray:
        """``c_l`` (n_layers + 1,): weight of the semantics in layer l (0 at the embedding, peak at 1/3 depth)."""
        depth = np.arange(self.n_layers + 1) / self.n_layers
        return np.exp(-(((depth - 1 / 3) / 0.35) ** 2)) * (depth > 0)

    def hidden_states(self) -> np.ndarray:
        """Per-layer states (n_layers + 1, V, hidden_dim): ``c_l s W + (1 - c_l) f U + offset + noise``."""
        rng = np.random.default_rng([self.seed, 3])
        V, dim = self.s.shape
        W = rng.normal(size=(dim, self.hidden_dim)) / np.sqrt(dim)
        form = rng.normal(size=(V, dim))  # word-form (spelling) code, unrelated to meaning
        U = rng.normal(size=(dim, self.hidden_dim)) / np.sqrt(dim)
        sem = _unit(self.s) @ W * np.sqrt(dim)
        frm = _unit(form) @ U * np.sqrt(dim)
        offset = 4.0 * rng.normal(size=self.hidden_dim)  # anisotropy: a direction shared by every state
        out = np.empty((self.n_layers + 1, V, self.hidden_dim))
        for layer, c in enumerate(self.layer_mixing()):
            noise = self.hidden_noise * rng.normal(size=(V, self.hidden_dim))
            out[layer] = c * sem + (1 - c) * frm + offset + noise
        return out

    # ------------------------------------------------------------------------------------------- behaviour
    def forced_choice(self, cues: np.ndarray, candidates: np.ndarray, n_pick: int = 2) -> np.ndarray:
        """The ``n_pick`` candidates (word indices) chosen on each trial: (T, n_pick)."""
        cues, candidates = np.asarray(cues), np.asarray(candidates)
        if self.random_responses:
            u = self._rng.random(candidates.shape)
        else:
            sim = np.einsum("td,tkd->tk", self._s_unit[cues], self._s_unit[candidates])  # (T, K)
            u = self.beta_fc * sim + self._rng.gumbel(size=sim.shape)
        order = np.argsort(-u, axis=1)[:, :n_pick]
        return np.take_along_axis(candidates, order, axis=1)

    def free_association(self, cues: np.ndarray, n_runs: int, n_assoc: int = 5) -> tuple[np.ndarray, np.ndarray]:
        """``n_runs`` runs per cue of ``n_assoc`` associates sampled without replacement (Gumbel top-k).

        Returns ``cue`` (R,) and ``associates`` (R, n_assoc), R = len(cues) * n_runs."""
        cues = np.repeat(np.asarray(cues), n_runs)
        logit = self.beta_fa * (self._s_unit[cues] @ self._s_unit.T) + self.alpha_fa * np.log(self.world.freq)
        if self.random_responses:
            logit = np.zeros_like(logit)
        logit[np.arange(len(cues)), cues] = -np.inf  # the cue is not its own associate
        g = logit + self._rng.gumbel(size=logit.shape)
        return cues, np.argsort(-g, axis=1)[:, :n_assoc]
