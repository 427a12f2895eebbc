"""The GLUE claims' disk cache of students and teachers: keys, round trip, off switch, unreadable entries, and a
cached smoke student equal to a freshly trained one."""

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
