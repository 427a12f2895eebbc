"""The GLUE claims' disk cache of students and teachers: keys, round trip, off switch, unreadable entries, and a
cached smoke student equal to a freshly trained one."""

import hashlib
import inspect
import os
from dataclasses import replace

import numpy as np
import pytest
import torch

from icml26.smoothspike import student_cache
from icml26.smoothspike.config import PRESETS

torch.set_num_threads(1)


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("ICML26_CACHE", str(tmp_path))
    monkeypatch.delenv("ICML26_SMOOTHSPIKE_CACHE", raising=False)
    return tmp_path / "smoothspike" / "students"


def _entry():
    return {"labels": np.array([0, 1, 1]), "pred": np.array([1, 1, 0]), "score": 33.3, "lr": 1e-3,
            "val": {1e-3: 0.75, 3e-4: 0.5}, "seconds": 1.5, "logits": np.ones((3, 2), np.float32)}  # fmt: skip


def test_cache_dir_follows_the_environment(cache, monkeypatch):
    assert student_cache.cache_dir() == cache
    monkeypatch.delenv("ICML26_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", "/x")
    assert str(student_cache.cache_dir()) == "/x/icml26/smoothspike/students"


def test_save_and_load_round_trip(cache):
    path = cache / "a.npz"
    student_cache.save(path, _entry())
    back = student_cache.load(path)
    assert back["val"] == {1e-3: 0.75, 3e-4: 0.5} and back["score"] == 33.3 and back["lr"] == 1e-3
    np.testing.assert_array_equal(back["pred"], [1, 1, 0])
    assert back["logits"].dtype == np.float32 and back["logits"].shape == (3, 2)
    assert [p.name for p in cache.iterdir()] == ["a.npz"]  # no temporary file left behind


def test_key_changes_with_everything_that_determines_a_student():
    cfg = PRESETS["smoke"]
    base = dict(task="sst2", seed=0, rotation="hadamard", partner=False, recipe="v1")
    key = student_cache.student_key(cfg, **base)
    assert key == student_cache.student_key(cfg, **base)  # stable
    variants = [dict(seed=1), dict(task="cola"), dict(rotation="none"), dict(partner=True), dict(recipe="cola-v2")]
    keys = {student_cache.student_key(cfg, **{**base, **v}) for v in variants}
    keys.add(student_cache.student_key(replace(cfg, glue_steps=3), **base))  # the budget
    keys.add(student_cache.student_key(replace(cfg, glue_lrs=(1e-3,)), **base))  # the grid
    keys.add(student_cache.student_key(cfg, **base, functions=(test_cache_dir_follows_the_environment,)))  # code
    assert key not in keys and len(keys) == len(variants) + 3


def test_key_follows_the_content_of_the_weights_and_tokenizer_files(tmp_path, monkeypatch):
    weights, tokenizer = tmp_path / "model.safetensors", tmp_path / "tokenizer.json"
    weights.write_bytes(b"w" * 3000)
    tokenizer.write_bytes(b'{"t": 1}')
    monkeypatch.setattr(student_cache, "weights_file", lambda: weights)
    monkeypatch.setattr(student_cache, "tokenizer_file", lambda: tokenizer)
    base = dict(task="sst2", seed=0, rotation="hadamard", partner=False, recipe="v1")

    def key():
        student_cache.content_digest.cache_clear()  # the digest is memoised per process: a new process, here
        return student_cache.student_key(PRESETS["smoke"], **base)

    keys = [key()]
    stat = weights.stat()
    weights.write_bytes(b"v" + b"w" * 2999)  # same name and size, same mtime: only the content differs
    os.utime(weights, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    keys.append(key())
    tokenizer.write_bytes(b'{"t": 2}')
    keys.append(key())
    assert len(set(keys)) == 3
    assert student_cache.content_digest(str(weights)) == hashlib.sha256(weights.read_bytes()).hexdigest()


@pytest.mark.parametrize("library", ["torch", "numpy", "tokenizers", "safetensors"])
def test_key_follows_the_library_versions(monkeypatch, library):
    base = dict(task="sst2", seed=0, rotation="hadamard", partner=False, recipe="v1")
    key = student_cache.student_key(PRESETS["smoke"], **base)
    versions = student_cache.library_versions()
    assert set(versions) == {"torch", "numpy", "tokenizers", "safetensors"}
    monkeypatch.setattr(student_cache, "library_versions", lambda: {**versions, library: versions[library] + "x"})
    assert student_cache.student_key(PRESETS["smoke"], **base) != key


@pytest.mark.parametrize("name", ["_teacher", "_trained", "_cached", "_train_student", "_train_teacher"])
def test_key_follows_the_claims_training_and_caching_code(monkeypatch, name):
    from icml26.smoothspike import claims

    functions = claims._training_code()
    assert getattr(claims, name) in functions
    digest = student_cache.code_digest(functions)
    real = inspect.getsource

    def edited(fn):  # the same function with one more line of source
        text = real(fn)
        return text + "# edited\n" if inspect.unwrap(fn) is inspect.unwrap(getattr(claims, name)) else text

    monkeypatch.setattr(student_cache.inspect, "getsource", edited)
    assert student_cache.code_digest(functions) != digest


def test_cached_student_computes_once_and_honours_the_off_switch(cache, monkeypatch):
    calls = []

    def compute():
        calls.append(1)
        return _entry()

    first = student_cache.cached_student("k", compute)
    second = student_cache.cached_student("k", compute)
    assert len(calls) == 1 and second["score"] == first["score"]
    np.testing.assert_array_equal(second["labels"], first["labels"])
    (cache / "k.npz").write_bytes(b"not an npz")  # an unreadable entry is recomputed and rewritten
    student_cache.cached_student("k", compute)
    assert len(calls) == 2 and student_cache.load(cache / "k.npz")["score"] == 33.3
    monkeypatch.setenv("ICML26_SMOOTHSPIKE_CACHE", "0")
    student_cache.cached_student("other", compute)
    assert len(calls) == 3 and not (cache / "other.npz").exists()


def test_a_cached_smoke_student_equals_a_fresh_one(cache):
    from icml26.smoothspike import claims

    claims._trained.cache_clear()
    claims._teacher.cache_clear()
    stored = claims._trained("smoke", 0, "sst2", "hadamard")  # trains, writes the teacher and the student
    assert len(list(cache.glob("*.npz"))) == 2
    claims._trained.cache_clear()
    claims._teacher.cache_clear()
    fresh = claims._train_student("smoke", 0, "sst2", "hadamard")  # teacher from disk: the same logits
    again = claims._trained("smoke", 0, "sst2", "hadamard")  # from disk
    for run in (fresh, again):
        np.testing.assert_array_equal(run["pred"], stored["pred"])
        assert run["score"] == stored["score"] and run["max input"] == pytest.approx(stored["max input"], rel=1e-6)
    claims._trained.cache_clear()
    claims._teacher.cache_clear()
