"""The fast trial runner: forced choice by *scoring* (no generation) and free association by batched sampling,
both on a key/value cache of the prompt prefix that every trial shares.

Forced choice (FC), one forward pass per batch of trials:

1. The prompt is ordered so that everything before the cue is the same for every trial (chat header, system
   prompt, instruction); that prefix of ``P`` tokens runs **once** per run and its keys/values are reused by
   every trial of every batch (:class:`PrefixCache`).
2. A batch of ``B`` trials is packed into one ``(B, W)`` input: row ``b`` holds the trial's own tokens (cue,
   candidate list, end of turn, assistant header) and then, for every candidate ``k``, the candidate's answer
   tokens but the last. A custom 4-D attention mask lets each candidate's tokens see the prefix, the trial's
   tokens and their own earlier tokens only -- never another candidate's -- and the position ids restart after
   the trial's tokens for every candidate, so candidate ``k`` is scored exactly as if it were the only answer
   (a tree of 16 continuations sharing one trunk; :func:`pack_fc_batch`).
3. ``score(k) = sum_t log p(w_k[t] | prompt, w_k[:t])`` -- the summed log-probability of all the candidate's
   tokens (``scoring="sum"``); ``"word"`` keeps the first token's only, ``"label"`` scores the labels ``A..P``
   of a labelled candidate list. The vocabulary projection runs only at the positions that predict an answer
   token (1 + sum_k (len_k - 1) per trial), not at every position. The 2 best-scoring candidates are the picks.

Free association (FA): the cue ends the prompt, so the same prefix cache serves it; a batch of runs is sampled
token by token (temperature ``T``, full softmax, a seeded ``torch.Generator`` per batch) with the cache growing
in place, and stops when every row has ended its turn.

Both write to the append-only :class:`~icml26.behaviorgeo.lm.TrialStore` (a rerun skips finished trials) with a
progress bar (ETA). ``flops`` in ``stats`` counts the multiply-adds actually computed (padding included) from
the model config and the token counts: :func:`forward_flops`.
"""

from __future__ import annotations

import inspect
import logging
import os

import numpy as np
import torch

from icml26.behaviorgeo.lm import (
    LABELS,
    TrialStore,
    _all_rows,
    _chat,
    _device_of,
    _keep,
    _progress,
    _vocab_hash,
    parse_associates,
)
from icml26.behaviorgeo.subject import fc_trials

logger = logging.getLogger(__name__)

__all__ = [
    "PrefixCache",
    "cached_hidden_states",
    "forward_flops",
    "naive_fc_scores",
    "run_fa_fast",
    "run_fc_fast",
    "score_fc_trials",
]

SCORINGS = ("sum", "word", "label")
# The instruction comes first, so that it belongs to the prefix every trial shares; then the candidates (shared
# by a trial's cue branch and its content-free branch when calibrating); the cue last.
FC_FAST_PROMPT = (
    "Which two of the candidate words are most closely related in meaning to the cue word? Answer with the two "
    "candidate words.\nCandidates: {options}\nCue word: {cue}"
)
FC_FAST_LABEL_PROMPT = (
    "Which two of the candidates are most closely related in meaning to the cue word? Answer with the letters of "
    "your two choices.\nCandidates:\n{options}\nCue word: {cue}"
)
NULL_CUE = "thing"  # the content-free cue of the calibration (a noun that is not in the shipped vocabulary)
FA_FAST_PROMPT = (
    "Write the first five words that come to mind when you read the word below. Reply with the five single words "
    "only, separated by commas (for 'sun': light, warm, sky, summer, day).\nWord: {cue}"
)
_CUE = "\x1fCUE\x1f"  # a marker no tokenizer merges with its neighbours' text


def fc_fast_text(cue: str, candidates: list[str], scoring: str) -> str:
    if scoring == "label":
        return FC_FAST_LABEL_PROMPT.format(cue=cue, options="\n".join(f"{LABELS[i]}. {w}" for i, w in
                                                                       enumerate(candidates)))  # fmt: skip
    return FC_FAST_PROMPT.format(cue=cue, options=", ".join(candidates))


# ---------------------------------------------------------------------------------------------- the model
def _parts(model):
    """The decoder trunk (returns normalised last hidden states), the vocabulary projection and the name of the
    trunk's cache keyword (``cache`` in transformers 5, ``past_key_values`` before)."""
    base = getattr(model, model.base_model_prefix)
    head = model.get_output_embeddings()
    params = inspect.signature(base.forward).parameters
    return base, head, "cache" if "cache" in params else "past_key_values"


def _neg(dtype: torch.dtype) -> float:
    return torch.finfo(dtype).min


def _with_dtype(config: dict, model) -> dict:
    """A store's configuration names the weights' dtype when it is not float32 (float32 stores keep their old
    configuration, so they still resume): a bfloat16 run never resumes a float32 one or the reverse."""
    if model.dtype != torch.float32:
        config["dtype"] = str(model.dtype).removeprefix("torch.")
    return config


def compile_elementwise(model):
    """Fuse the element-wise work of every decoder layer with ``torch.compile`` (inductor), in place; returns
    the model. The RMSNorms (upcast to float32, square, mean, rsqrt, scale, cast back: seven passes over the
    activations) and the gated MLP's ``SiLU(gate) * up`` become one generated kernel each, the matrix products
    inside stay oneDNN / AMX calls. Attention stays eager: it extends the KV cache in Python, and compiling whole
    layers recompiles for every layer's cache and falls back. Shapes are marked dynamic, so a new batch width
    does not recompile; the first call compiles (10-60 s on one CPU core; needs a C++ compiler). In bfloat16 the
    fused kernels keep their intermediates in float32, so picks move like bfloat16's own near-ties do."""
    targets = [(parent, name) for parent in model.modules() for name, child in parent.named_children()
               if type(child).__name__.endswith(("RMSNorm", "MLP"))]  # fmt: skip
    if not targets:
        raise ValueError(f"{type(model).__name__} has no RMSNorm / MLP modules to compile")
    for parent, name in targets:
        setattr(parent, name, torch.compile(getattr(parent, name), dynamic=True))
    return model


class PrefixCache:
    """Keys and values of the prompt prefix shared by every trial, computed once; ``fresh(B)`` is a new cache
    holding ``B`` copies, which a forward pass then extends in place."""

    def __init__(self, model, ids: list[int]):
        from transformers import DynamicCache

        self.ids = list(ids)
        self.length = len(ids)
        base = _parts(model)[0]
        self._dynamic = DynamicCache
        with torch.inference_mode():
            x = torch.as_tensor([self.ids], device=_device_of(model))
            out = base(input_ids=x, use_cache=True)
        cache = out.cache if hasattr(out, "cache") and out.cache is not None else out.past_key_values
        self.kv = [(t[0], t[1]) for t in cache]  # per layer: (1, heads, P, head_dim) x 2

    def fresh(self, batch: int):
        return self._dynamic([(k.expand(batch, -1, -1, -1), v.expand(batch, -1, -1, -1)) for k, v in self.kv])


def _prefix_ids(tok, template_text: str, chat: bool) -> list[int]:
    """Tokens every prompt shares: the chat-rendered prompt up to the cue, less its last token (which may merge
    with the cue's first characters)."""
    text = _chat(tok, template_text, chat)
    head = text[: text.index(_CUE)]
    ids = tok(head)["input_ids"]
    return ids[:-1]


def forward_flops(config, query_tokens: int, kv_length: int, logit_rows: int) -> float:
    """Multiply-add FLOPs (2 per MAC) of one forward of ``query_tokens`` tokens (all rows) attending to
    ``kv_length`` keys each, with ``logit_rows`` rows projected onto the vocabulary: the projections
    (Q, K, V, O with grouped KV heads; gate, up, down of the MLP), the two attention products, the LM head."""
    d, L = config.hidden_size, config.num_hidden_layers
    heads = config.num_attention_heads
    kv_heads = getattr(config, "num_key_value_heads", None) or heads
    head_dim = getattr(config, "head_dim", None) or d // heads
    ff = config.intermediate_size
    per_token = L * (d * heads * head_dim * 2 + 2 * d * kv_heads * head_dim + 3 * d * ff)  # MACs
    attention = L * 2 * heads * head_dim * kv_length  # QK^T and AV per query token (MACs)
    return 2.0 * (query_tokens * (per_token + attention) + logit_rows * d * config.vocab_size)


# ------------------------------------------------------------------------------------------ forced choice
def pack_fc_batch(trunks: list[list[int]], branches: list[list[list[int]]], answers: list[list[list[int]]],
                  prefix_len: int, pad_id: int):  # fmt: skip
    """Pack trials, their branches and their candidates' answer tokens into one batch: a tree per row.

    ``trunks[b]``: trial b's tokens after the shared prefix that all its branches share; ``branches[b][r]``: the
    tokens of branch r (the rest of the prompt under one cue: the cue itself, or the content-free cue of the
    calibration; may be empty); ``answers[b][k]``: candidate k's answer tokens, scored after every branch.
    Returns ``ids`` (B, W), ``pos`` (B, W) position ids, ``allow`` (B, W, W) which in-row key each query may see,
    and the scoring plan: rows of ``(b, r, k, position, token)``, one per answer token and branch, ``position``
    being where the token is predicted."""
    rows, branch_of, cand_of, positions, plan = [], [], [], [], []
    for b, (trunk, brs, cands) in enumerate(zip(trunks, branches, answers, strict=True)):
        seq, br_o, k_o = list(trunk), [-1] * len(trunk), [-1] * len(trunk)
        pos = list(range(prefix_len, prefix_len + len(trunk)))
        for r, branch in enumerate(brs):
            seq += branch
            br_o += [r] * len(branch)
            k_o += [-1] * len(branch)
            top = prefix_len + len(trunk) + len(branch)  # the first answer token's position
            pos += list(range(top - len(branch), top))
            last = len(seq) - 1  # predicts every candidate's first token (the trunk's end when the branch is empty)
            for k, toks in enumerate(cands):
                start = len(seq)
                for t, token in enumerate(toks):
                    plan.append((b, r, k, last if t == 0 else start + t - 1, token))
                extra = toks[:-1]
                seq += extra
                br_o += [r] * len(extra)
                k_o += [k] * len(extra)
                pos += list(range(top, top + len(extra)))
        rows.append(seq)
        branch_of.append(br_o)
        cand_of.append(k_o)
        positions.append(pos)
    W = max(len(s) for s in rows)
    B = len(rows)
    ids = torch.full((B, W), pad_id, dtype=torch.long)
    pos = torch.zeros((B, W), dtype=torch.long)
    br = torch.full((B, W), -2, dtype=torch.long)  # -2 padding, -1 trunk, r branch r
    kk = torch.full((B, W), -1, dtype=torch.long)  # -1 the prompt's own tokens, k candidate k
    for b in range(B):
        n = len(rows[b])
        ids[b, :n] = torch.as_tensor(rows[b])
        pos[b, :n] = torch.as_tensor(positions[b])
        br[b, :n] = torch.as_tensor(branch_of[b])
        kk[b, :n] = torch.as_tensor(cand_of[b])
    bq, bk = br[:, :, None], br[:, None, :]  # (B, W, 1), (B, 1, W)
    kq, kkey = kk[:, :, None], kk[:, None, :]
    causal = torch.ones(W, W, dtype=torch.bool).tril()
    same_branch = (bk == bq) & ((kkey == -1) | (kkey == kq))  # the branch's prompt, or the same candidate
    allow = causal & (bq != -2) & (bk != -2) & ((bk == -1) | same_branch)  # (B, W, W)
    return ids, pos, allow, plan


def _attention_mask(allow: torch.Tensor, prefix_len: int, dtype: torch.dtype) -> torch.Tensor:
    """(B, 1, W, P + W) additive mask: every query sees the prefix; in-row keys as ``allow`` says (a padding
    query sees the prefix only, so no softmax row is empty)."""
    B, W, _ = allow.shape
    full = torch.cat([torch.ones(B, W, prefix_len, dtype=torch.bool), allow], dim=2)
    return torch.zeros(full.shape, dtype=dtype).masked_fill(~full, _neg(dtype))[:, None]


@torch.inference_mode()
def score_fc_trials(model, prefix: PrefixCache, trunks, branches, answers, pad_id: int, stats: dict | None = None):
    """Summed answer-token log-probabilities (B, R, K) of every candidate after every branch of every trial, in
    one forward pass."""
    base, head, key = _parts(model)
    dev = _device_of(model)
    ids, pos, allow, plan = pack_fc_batch(trunks, branches, answers, prefix.length, pad_id)
    mask = _attention_mask(allow, prefix.length, model.dtype).to(dev)
    B, W = ids.shape
    h = base(input_ids=ids.to(dev), attention_mask=mask, position_ids=pos.to(dev), use_cache=True,
             **{key: prefix.fresh(B)}).last_hidden_state  # (B, W, d)  # fmt: skip
    plan_a = np.asarray(plan, dtype=np.int64)  # (N, 5): b, r, k, position, token
    where, inverse = np.unique(plan_a[:, 0] * W + plan_a[:, 3], return_inverse=True)
    logp = torch.log_softmax(head(h.reshape(B * W, -1)[torch.as_tensor(where, device=dev)]).float(), -1)  # (U, V)
    tok_lp = logp[torch.as_tensor(inverse, device=dev), torch.as_tensor(plan_a[:, 4], device=dev)]  # (N,)
    R, K = max(len(r) for r in branches), max(len(a) for a in answers)
    scores = torch.zeros(B * R * K, dtype=torch.float64, device=dev)
    flat = (plan_a[:, 0] * R + plan_a[:, 1]) * K + plan_a[:, 2]
    scores.index_add_(0, torch.as_tensor(flat, device=dev), tok_lp.double())
    if stats is not None:
        stats["flops"] = stats.get("flops", 0.0) + forward_flops(model.config, B * W, prefix.length + W, len(where))
        stats["tokens"] = stats.get("tokens", 0) + B * W
        stats["forwards"] = stats.get("forwards", 0) + 1
    return scores.view(B, R, K).cpu().numpy()


@torch.inference_mode()
def naive_fc_scores(model, tok, cue: str, candidates: list[str], scoring: str = "sum", chat: bool = True,
                    calibrate: bool = False):  # fmt: skip
    """The reference the fast scorer must equal: for each candidate, one full forward pass of the whole prompt
    followed by the candidate's answer, no cache, no packing, no padding -> (K,) summed log-probabilities
    (minus those under the content-free cue with ``calibrate``)."""
    if calibrate:
        return naive_fc_scores(model, tok, cue, candidates, scoring, chat) - naive_fc_scores(
            model, tok, NULL_CUE, candidates, scoring, chat)  # fmt: skip
    text = _chat(tok, fc_fast_text(cue, candidates, scoring), chat)
    prompt = tok(text)["input_ids"]
    out = []
    for k, w in enumerate(candidates):
        ans = _answer_tokens(tok, LABELS[k] if scoring == "label" else w)
        if scoring == "word":
            ans = ans[:1]
        x = torch.as_tensor([prompt + ans], device=_device_of(model))
        logp = torch.log_softmax(model(input_ids=x).logits[0].float(), -1)  # (T, V)
        out.append(sum(float(logp[len(prompt) - 1 + t, a]) for t, a in enumerate(ans)))
    return np.asarray(out)


def _after_prefix(tok, text: str, prefix: PrefixCache) -> list[int]:
    ids = tok(text)["input_ids"]
    if ids[: prefix.length] != prefix.ids:
        raise RuntimeError("a prompt does not start with the shared prefix (tokenizer merge)")
    return ids[prefix.length :]


def _common_prefix(a: list[int], b: list[int]) -> int:
    """Length of the common start of two token lists, less one token (the last shared token may belong to a
    merge that differs), so both branches are non-empty."""
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return max(0, min(n - 1, len(a) - 1, len(b) - 1))


def _answer_tokens(tok, word: str) -> list[int]:
    t = tok(word, add_special_tokens=False)["input_ids"]
    if not t:
        raise ValueError(f"the tokenizer encodes the answer {word!r} to nothing")
    return list(t)


def _cue_range(cues: tuple[int, int] | None, n_words: int) -> tuple[int, int]:
    """``(start, stop)`` of the cue indices to run, checked against the vocabulary (None: all)."""
    if cues is None:
        return 0, n_words
    start, stop = (int(c) for c in cues)
    if not 0 <= start < stop <= n_words:
        raise ValueError(f"the cue range {start}:{stop} must satisfy 0 <= start < stop <= {n_words} (the vocabulary)")
    return start, stop


def fc_trial_indices(n_words: int, n_candidates: int, shuffles: int, trials_per_cue: int | None) -> np.ndarray:
    """Indices into :func:`~icml26.behaviorgeo.subject.fc_trials`'s design: all trials, or the first
    ``trials_per_cue`` of every cue (each a set of 16 of the cue's seeded shuffle; every cue equally often)."""
    per = -(-(n_words - 1) // n_candidates) * shuffles
    t = np.arange(n_words * per)
    return t if trials_per_cue is None or trials_per_cue >= per else t[(t % per) < trials_per_cue]


def run_fc_fast(
    model,
    tok,
    vocab: list[str],
    store: str | os.PathLike | None = None,
    *,
    model_name: str = "model",
    shuffles: int = 1,
    trials_per_cue: int | None = None,
    n_candidates: int = 16,
    batch: int = 32,
    seed: int = 0,
    max_trials: int | None = None,
    chat: bool = True,
    scoring: str = "sum",
    calibrate: bool = False,
    progress: bool | None = False,
    stats: dict | None = None,
    cues: tuple[int, int] | None = None,
):
    """Run (or resume) forced-choice trials by scoring; one row per trial (``trial, cue, candidates, pick1,
    pick2, logp1, logp2``; ``logp`` = the pick's summed answer log-probability under ``scoring``).

    ``calibrate=True`` scores each candidate by ``log p(answer | cue) - log p(answer | content-free cue)``, the
    second term read from a branch of the same row in which the cue is :data:`NULL_CUE` (the candidate list is
    the shared trunk): it removes the model's preference for a candidate whatever the cue -- its list
    position, its spelling, its frequency -- and leaves what the cue adds (``logp`` then holds this
    difference).

    ``cues = (start, stop)`` runs only the design's trials whose cue index lies in ``[start, stop)`` (trial ids
    stay those of the whole vocabulary's design, so stores of disjoint cue ranges concatenate into one)."""
    import pandas as pd

    ranged, (cue_lo, cue_hi) = cues is not None, _cue_range(cues, len(vocab))
    if scoring not in SCORINGS:
        raise ValueError(f"scoring must be one of {', '.join(SCORINGS)}; got {scoring!r}")
    if n_candidates > len(LABELS):
        raise ValueError(f"at most {len(LABELS)} candidates can be labelled")
    if calibrate and NULL_CUE in vocab:
        raise ValueError(f"the vocabulary holds the content-free cue {NULL_CUE!r}; calibration needs it outside")
    cues, cands = fc_trials(len(vocab), n_candidates, shuffles, seed)  # (T,), (T, K)
    template = fc_fast_text(_CUE, [_CUE] * n_candidates, scoring)
    prefix_ids = _prefix_ids(tok, template, chat)  # also refuses a model without a chat template
    if scoring == "label":
        label_ids = [_answer_tokens(tok, LABELS[k]) for k in range(n_candidates)]
        if len({tuple(a) for a in label_ids}) != n_candidates:
            raise ValueError("the tokenizer maps two answer labels to one token sequence; use --scoring sum")
        word_ans = None
    else:
        word_ans = [_answer_tokens(tok, w) for w in vocab]
        if scoring == "word":
            word_ans = [a[:1] for a in word_ans]
    config = {"paradigm": "fc", "runner": "fast", "model": model_name, "vocab": _vocab_hash(vocab),
              "n_words": len(vocab), "shuffles": shuffles, "trials_per_cue": trials_per_cue,
              "n_candidates": n_candidates, "seed": seed, "chat": chat, "scoring": scoring,
              "calibrate": NULL_CUE if calibrate else False,
              "prompt": FC_FAST_LABEL_PROMPT if scoring == "label" else FC_FAST_PROMPT}  # fmt: skip
    if ranged:  # stores of the whole design keep their config (and resume)
        config["cues"] = [cue_lo, cue_hi]
    ts = TrialStore(store, _with_dtype(config, model)) if store is not None else None
    if ts is not None:
        ts.write_vocab(vocab)
    done = ts.done("trial") if ts is not None else set()
    design = fc_trial_indices(len(vocab), n_candidates, shuffles, trials_per_cue)
    design = design[(cues[design] >= cue_lo) & (cues[design] < cue_hi)]
    if max_trials is not None:
        design = design[:max_trials]
    todo = [int(t) for t in design if int(t) not in done]
    prefix = PrefixCache(model, prefix_ids) if todo else None
    pad = tok.pad_token_id if tok.pad_token_id is not None else (tok.eos_token_id or 0)
    rows_all = []
    bar = _progress(len(todo), "forced choice", progress)
    for start in range(0, len(todo), batch):
        idx = todo[start : start + batch]
        trunks, branches = [], []
        for t in idx:
            words = [vocab[c] for c in cands[t]]
            cue_ids = _after_prefix(tok, _chat(tok, fc_fast_text(vocab[cues[t]], words, scoring), chat), prefix)
            if not calibrate:
                trunks.append(cue_ids)
                branches.append([[]])
                continue
            null_ids = _after_prefix(tok, _chat(tok, fc_fast_text(NULL_CUE, words, scoring), chat), prefix)
            n = _common_prefix(cue_ids, null_ids)
            trunks.append(cue_ids[:n])
            branches.append([cue_ids[n:], null_ids[n:]])
        answers = [label_ids if word_ans is None else [word_ans[c] for c in cands[t]] for t in idx]
        lp3 = score_fc_trials(model, prefix, trunks, branches, answers, pad, stats)  # (B, R, K)
        lp = lp3[:, 0] - lp3[:, 1] if calibrate else lp3[:, 0]  # (B, K)
        order = np.argsort(-lp, axis=1, kind="stable")[:, :2]
        rows = [
            {"trial": t, "cue": vocab[cues[t]], "candidates": "|".join(vocab[c] for c in cands[t]),
             "pick1": vocab[cands[t][order[r, 0]]], "pick2": vocab[cands[t][order[r, 1]]],
             "logp1": float(lp[r, order[r, 0]]), "logp2": float(lp[r, order[r, 1]])}
            for r, t in enumerate(idx)
        ]  # fmt: skip
        _keep(ts, rows_all, pd.DataFrame(rows))
        bar.update(len(idx))
    bar.close()
    if stats is not None:
        stats["trials"] = stats.get("trials", 0) + len(todo)
    return _all_rows(ts, rows_all)


# -------------------------------------------------------------------------------------- free association
@torch.inference_mode()
def sample_fa_batch(model, prefix: PrefixCache, bodies: list[list[int]], *, max_new_tokens: int,
                    temperature: float, stop_ids: set[int], generator: torch.Generator,
                    stats: dict | None = None, top_p: float = 1.0) -> list[list[int]]:  # fmt: skip
    """Sample up to ``max_new_tokens`` tokens after each body (cache of the prefix, then of the bodies, growing
    in place); a row stops at its first ``stop_ids`` token. Returns the sampled tokens of each row. ``top_p`` < 1
    samples from the nucleus: the most probable tokens whose mass first reaches ``top_p``."""
    base, head, key = _parts(model)
    dev = _device_of(model)
    B, W, P = len(bodies), max(len(b) for b in bodies), prefix.length
    lens = torch.as_tensor([len(b) for b in bodies])
    ids = torch.zeros((B, W), dtype=torch.long)
    for b, body in enumerate(bodies):
        ids[b, : len(body)] = torch.as_tensor(body)
    real = torch.arange(W)[None] < lens[:, None]  # (B, W)
    allow = torch.ones(W, W, dtype=torch.bool).tril() & real[:, None, :] & real[:, :, None]
    pos = P + torch.arange(W)[None].expand(B, W)
    cache = prefix.fresh(B)
    mask = _attention_mask(allow, P, model.dtype).to(dev)
    h = base(input_ids=ids.to(dev), attention_mask=mask, position_ids=pos.to(dev), use_cache=True,
             **{key: cache}).last_hidden_state  # (B, W, d)  # fmt: skip
    last = h[torch.arange(B), (lens - 1).to(dev)]  # (B, d)
    kv_real = torch.cat([torch.ones(B, P, dtype=torch.bool), real], dim=1)  # (B, P + W)
    next_pos = (P + lens).to(dev)
    out = [[] for _ in range(B)]
    done = torch.zeros(B, dtype=torch.bool)
    flops = forward_flops(model.config, B * W, P + W, B)
    for step in range(max_new_tokens):
        probs = torch.softmax(head(last).float() / temperature, dim=-1).cpu()  # (B, V)
        if top_p < 1.0:
            p_sorted, order = probs.sort(dim=-1, descending=True)
            p_sorted[(p_sorted.cumsum(-1) - p_sorted) >= top_p] = 0.0  # tokens past the nucleus's mass
            probs = torch.zeros_like(probs).scatter_(-1, order, p_sorted)
        nxt = torch.multinomial(probs, 1, generator=generator)[:, 0]  # (B,)
        for b in range(B):
            if not done[b]:
                out[b].append(int(nxt[b]))
                done[b] = int(nxt[b]) in stop_ids
        if bool(done.all()) or step == max_new_tokens - 1:
            break
        kv_real = torch.cat([kv_real, torch.ones(B, 1, dtype=torch.bool)], dim=1)
        step_mask = torch.zeros(kv_real.shape, dtype=model.dtype).masked_fill(~kv_real, _neg(model.dtype))
        h = base(input_ids=nxt[:, None].to(dev), attention_mask=step_mask[:, None, None].to(dev),
                 position_ids=next_pos[:, None], use_cache=True, **{key: cache}).last_hidden_state  # fmt: skip
        last = h[:, 0]
        next_pos = next_pos + 1
        flops += forward_flops(model.config, B, kv_real.shape[1], B)
    if stats is not None:
        stats["flops"] = stats.get("flops", 0.0) + flops
        stats["forwards"] = stats.get("forwards", 0) + step + 1
    return [[t for t in row if t not in stop_ids] for row in out]


def run_fa_fast(
    model,
    tok,
    vocab: list[str],
    store: str | os.PathLike | None = None,
    *,
    model_name: str = "model",
    runs: int = 2,
    n_assoc: int = 5,
    batch: int = 64,
    seed: int = 0,
    max_new_tokens: int = 20,
    temperature: float = 1.0,
    max_trials: int | None = None,
    chat: bool = True,
    progress: bool | None = False,
    stats: dict | None = None,
    top_p: float = 1.0,
    cues: tuple[int, int] | None = None,
):
    """Run (or resume) free-association runs by batched sampling on the shared prefix cache; one row per run
    (``run, cue, text, status, associates, n_in_vocab``). Each batch samples from a generator seeded by (seed,
    its first run), so a resumed store samples what an uninterrupted one would when ``batch`` is the same.
    ``top_p`` < 1 samples from the nucleus (:func:`sample_fa_batch`). ``cues = (start, stop)`` runs only the
    cues of index in ``[start, stop)`` (run ids stay ``cue * runs + r``, so stores of disjoint ranges concatenate;
    its batches start at other run ids than a whole run's, so they sample other, equally valid, associates)."""
    import pandas as pd

    cue_lo, cue_hi = _cue_range(cues, len(vocab))
    if not 0 < temperature <= 100 or not np.isfinite(temperature):
        raise ValueError(f"temperature must be in (0, 100]; got {temperature}")
    if not 0 < top_p <= 1:
        raise ValueError(f"top_p must be in (0, 1]; got {top_p}")
    prefix_ids = _prefix_ids(tok, FA_FAST_PROMPT.format(cue=_CUE), chat)
    config = {"paradigm": "fa", "runner": "fast", "model": model_name, "vocab": _vocab_hash(vocab),
              "n_words": len(vocab), "runs": runs, "n_assoc": n_assoc, "seed": seed, "chat": chat,
              "max_new_tokens": max_new_tokens, "temperature": temperature, "prompt": FA_FAST_PROMPT}  # fmt: skip
    if top_p < 1:  # stores sampled from the full softmax keep their config (and resume)
        config["top_p"] = top_p
    if cues is not None:
        config["cues"] = [cue_lo, cue_hi]
    ts = TrialStore(store, _with_dtype(config, model)) if store is not None else None
    if ts is not None:
        ts.write_vocab(vocab)
    done = ts.done("run") if ts is not None else set()
    cue_of = np.repeat(np.arange(len(vocab)), runs)
    wanted = np.flatnonzero((cue_of >= cue_lo) & (cue_of < cue_hi))
    if max_trials is not None:
        wanted = wanted[:max_trials]
    todo = [int(t) for t in wanted if int(t) not in done]
    index = {w: i for i, w in enumerate(vocab)}
    stop = {i for i in (tok.eos_token_id, tok.convert_tokens_to_ids("<|im_end|>")) if isinstance(i, int)}
    stop.discard(tok.unk_token_id) if tok.unk_token_id is not None else None
    prefix = PrefixCache(model, prefix_ids) if todo else None
    rows_all = []
    bar = _progress(len(todo), "free association", progress)
    for start in range(0, len(todo), batch):
        idx = todo[start : start + batch]
        texts = [_chat(tok, FA_FAST_PROMPT.format(cue=vocab[cue_of[t]]), chat) for t in idx]
        bodies = []
        for ids in tok(texts)["input_ids"]:
            if ids[: prefix.length] != prefix.ids:
                raise RuntimeError("a run's prompt does not start with the shared prefix (tokenizer merge)")
            bodies.append(ids[prefix.length :])
        gen = torch.Generator().manual_seed(seed * 1_000_003 + idx[0])
        sampled = sample_fa_batch(model, prefix, bodies, max_new_tokens=max_new_tokens, temperature=temperature,
                                  stop_ids=stop, generator=gen, stats=stats, top_p=top_p)  # fmt: skip
        rows = []
        for t, toks in zip(idx, sampled, strict=True):
            text = tok.decode(toks, skip_special_tokens=True)
            items, found, status = parse_associates(text, index, n_assoc)
            rows.append({"run": t, "cue": vocab[cue_of[t]], "text": text, "status": status,
                         "associates": "|".join(items), "n_in_vocab": int(sum(f >= 0 for f in found))})  # fmt: skip
        _keep(ts, rows_all, pd.DataFrame(rows))
        bar.update(len(idx))
    bar.close()
    if stats is not None:
        stats["trials"] = stats.get("trials", 0) + len(todo)
    return _all_rows(ts, rows_all)


# ----------------------------------------------------------------------------------------- hidden states
def cached_hidden_states(model, tok, vocab: list[str], strategy: str, folder: str | os.PathLike,
                         model_name: str = "model", batch: int = 32) -> np.ndarray:  # fmt: skip
    """:func:`~icml26.behaviorgeo.lm.hidden_states` (L+1, V, d), kept as float32 in ``folder`` under a name
    made of the model, the vocabulary's hash and the strategy, so a rerun reads them back."""
    from pathlib import Path

    from icml26.behaviorgeo.lm import hidden_states

    path = Path(folder) / f"hidden-{model_name}-{_vocab_hash(vocab)}-{strategy}.npy"
    if path.is_file():
        H = np.load(path)
        if H.shape[1] == len(vocab):
            return H.astype(np.float64)
    H = hidden_states(model, tok, vocab, strategy, batch=batch)
    tmp = path.with_suffix(".part.npy")
    np.save(tmp, H.astype(np.float32))
    os.replace(tmp, path)
    return H
