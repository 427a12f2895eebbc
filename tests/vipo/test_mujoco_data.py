"""D4RL-like MuJoCo data: the Minari layout (written by us, read by us and by minari), the D4RL references, the
SB3 SAC behaviour run (resumable), the replay buffer cut into episodes, the ``dataset`` verb, the shipped file."""

import dataclasses
import hashlib
import json
import re
from pathlib import Path

import h5py
import numpy as np
import pytest
import torch

from icml26.cli import main as icml26_main
from icml26.vipo.data import load_dataset
from icml26.vipo.mujoco_data import (
    D4RL_REF,
    BehaviourRecipe,
    collect,
    episodes_to_d4rl,
    normalised,
    random_policy,
    read_minari,
    write_minari,
)

torch.set_num_threads(1)

SMOKE = Path(__file__).parents[2] / "src" / "icml26" / "vipo" / "data" / "hopper-medium-smoke"


@pytest.fixture(scope="module")
def episodes():
    return collect(random_policy("Hopper-v5"), "Hopper-v5", 120, seed=3, show_progress=False)


def test_collected_episodes_are_consistent(episodes):
    assert sum(len(e["rewards"]) for e in episodes) == 120
    for e in episodes:
        assert len(e["observations"]) == len(e["actions"]) + 1 == len(e["rewards"]) + 1
        assert e["terminations"][-1] or e["truncations"][-1]  # every episode ends, the last one cut by the budget
        assert not (e["terminations"][:-1] | e["truncations"][:-1]).any()
    d = episodes_to_d4rl(episodes)
    first = len(episodes[0]["rewards"])
    np.testing.assert_array_equal(d["next_observations"][: first - 1], d["observations"][1:first])


def test_minari_roundtrip_and_minari_reads_our_layout(episodes, tmp_path):
    out = write_minari(tmp_path / "hop", episodes, "Hopper-v5", "icml26/hopper-random-v0", {"ref_min_score": -20.0})
    back, meta = read_minari(out)
    assert meta["total_steps"] == 120 and meta["ref_min_score"] == -20.0 and len(back) == len(episodes)
    for a, b in zip(episodes, back, strict=True):
        for k in a:
            np.testing.assert_array_equal(a[k], b[k])
    data = load_dataset(out, "Hopper-v5")  # the loader takes the directory, validated against the task
    assert data["meta"]["env"] == "Hopper-v5" and data["observations"].shape == (120, 11)
    minari = pytest.importorskip("minari")
    ds = minari.MinariDataset(out / "data")
    assert ds.total_episodes == len(episodes) and ds.total_steps == 120
    ep = next(iter(ds))
    np.testing.assert_array_equal(ep.observations, episodes[0]["observations"])
    np.testing.assert_array_equal(ep.rewards, episodes[0]["rewards"])


def test_minari_written_by_minari_loads(tmp_path, episodes):
    """A data set written by minari itself (its own storage API) reads through our loader."""
    minari = pytest.importorskip("minari")
    import gymnasium as gym
    from minari.data_collector import EpisodeBuffer
    from minari.dataset.minari_storage import MinariStorage

    env = gym.make("Hopper-v5")
    (tmp_path / "m").mkdir()
    storage = MinariStorage.new(tmp_path / "m" / "data", env.observation_space, env.action_space, env_spec=env.spec)
    bufs = [EpisodeBuffer(observations=list(e["observations"].astype(np.float64)), actions=list(e["actions"]),
                          rewards=list(e["rewards"]), terminations=list(e["terminations"]),
                          truncations=list(e["truncations"])) for e in episodes]  # fmt: skip
    storage.update_episodes(bufs)
    meta = json.loads((tmp_path / "m" / "data" / "metadata.json").read_text())
    meta.update(dataset_id="test/hopper-v0", minari_version=minari.__version__)
    (tmp_path / "m" / "data" / "metadata.json").write_text(json.dumps(meta))
    data = load_dataset(tmp_path / "m", "Hopper-v5")
    assert data["meta"]["env"] == "Hopper-v5" and len(data["rewards"]) == 120


def test_bad_minari_directories(tmp_path, episodes):
    with pytest.raises(ValueError, match="not a Minari data set"):
        load_dataset(tmp_path)
    out = write_minari(tmp_path / "d", episodes, "Hopper-v5", "x/y-v0")
    with pytest.raises(FileExistsError, match="never overwritten"):
        write_minari(out, episodes, "Hopper-v5", "x/y-v0")
    with h5py.File(out / "data" / "main_data.hdf5", "a") as fh:
        del fh["episode_0/rewards"]
        fh["episode_0/rewards"] = np.zeros(1)
    with pytest.raises(ValueError, match="one more step than rewards"):
        load_dataset(out)
    (out / "data" / "metadata.json").write_text("{not json")
    with pytest.raises(ValueError, match="not readable"):
        load_dataset(out)


def test_d4rl_reference_returns():
    """D4RL's published references: the random return scores 0, the expert return 100."""
    for task, (lo, hi) in D4RL_REF.items():
        assert normalised(task, lo) == pytest.approx(0.0) and normalised(task, hi) == pytest.approx(100.0)
    assert D4RL_REF["hopper"] == (-20.272305, 3234.3)


def test_sac_behaviour_resumes_and_replay_buffer_cuts_into_episodes(tmp_path):
    pytest.importorskip("stable_baselines3")
    from icml26.vipo.mujoco_data import replay_episodes, train_behaviour

    recipe = BehaviourRecipe(max_steps=200, medium_score=150.0, expert_steps=400, eval_every=100, eval_episodes=1,
                             learning_starts=60, hidden=(16,))  # fmt: skip
    first = train_behaviour("hopper", tmp_path / "w", recipe, max_steps=100, show_progress=False)
    assert first["steps"] == 100 and len(first["evals"]) == 1 and not first["medium_reached"]
    again = train_behaviour("hopper", tmp_path / "w", recipe, show_progress=False)  # resumes at 100
    assert again["steps"] == 200 and [e[0] for e in again["evals"]] == [100, 200]
    assert again["medium"] == f"sac_{max(again['evals'], key=lambda e: e[1])[0]}.zip"  # budget out: the best one
    eps = replay_episodes(tmp_path / "w" / "buffer.pkl", "Hopper-v5")
    assert sum(len(e["rewards"]) for e in eps) == 200
    for e in eps:  # observations chain within an episode; actions inside the action space
        assert len(e["observations"]) == len(e["rewards"]) + 1 and (np.abs(e["actions"]) <= 1 + 1e-6).all()
        assert e["terminations"][-1] or e["truncations"][-1]
    with pytest.raises(ValueError, match="holds a hopper run with seed 0"):
        train_behaviour("hopper", tmp_path / "w", recipe, seed=1, show_progress=False)
    # a medium score that a past evaluation already reaches would have stopped the run there: refused
    low = min(e[2] for e in again["evals"]) - 1.0
    with pytest.raises(ValueError, match=re.escape(f"another recipe (medium-score 150.0 -> {low!r})")):
        train_behaviour("hopper", tmp_path / "w", dataclasses.replace(recipe, medium_score=low), show_progress=False)
    # one no evaluation reached, and a random warm-up the run is past both ends of, change nothing made: accepted
    later = dataclasses.replace(recipe, medium_score=160.0, learning_starts=80)
    third = train_behaviour("hopper", tmp_path / "w", later, max_steps=300, show_progress=False)
    assert third["steps"] == 300 and third["recipe"]["medium_score"] == 160.0
    assert third["recipe"]["learning_starts"] == 60  # the value the run was made with
    assert third["recipe_changes"] == [[200, "medium-score 150.0 -> 160.0"], [200, "learning-starts 60 -> 80"]]
    assert third["medium"] == f"sac_{max(third['evals'], key=lambda e: e[1])[0]}.zip"
    with pytest.raises(ValueError, match=re.escape("learning-starts 60 -> 400")):  # the run is not past 400 yet
        train_behaviour("hopper", tmp_path / "w", dataclasses.replace(later, learning_starts=400), show_progress=False)


def _fails_cleanly(argv, capsys, match):
    code = icml26_main(["vipo", *argv])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and "Traceback" not in err and match in err, err


def test_dataset_verb_writes_minari_and_hdf5(tmp_path, capsys):
    out = tmp_path / "hopper-random"
    argv = ["vipo", "dataset", "--env", "hopper", "--kind", "random", "--transitions", "150"]
    assert icml26_main([*argv, "--out", str(out), "--json", str(tmp_path / "s.json")]) == 0
    s = json.loads((tmp_path / "s.json").read_text())
    assert s["transitions"] == 150 and s["ref_max_score"] == 3234.3 and "not D4RL" in s["d4rl_like"]
    assert s["sha256"] == hashlib.sha256((out / "data" / "main_data.hdf5").read_bytes()).hexdigest()
    assert "D4RL-like" in capsys.readouterr().out
    assert load_dataset(out, "Hopper-v5")["observations"].shape == (150, 11)
    assert icml26_main([*argv, "--out", str(tmp_path / "h.hdf5")]) == 0
    flat = load_dataset(tmp_path / "h.hdf5", "Hopper-v5")
    assert flat["meta"]["ref_min_score"] == D4RL_REF["hopper"][0] and len(flat["rewards"]) == 150
    _fails_cleanly([*argv[1:], "--out", str(out)], capsys, "is a directory")  # a Minari set is never overwritten
    _fails_cleanly([*argv[1:], "--out", str(tmp_path / "x.csv")], capsys, "must end with")
    _fails_cleanly(["dataset", "--kind", "expert", "--max-steps", "1000", "--expert-steps", "500", "--out",
                    str(tmp_path / "e")], capsys, "must exceed")  # fmt: skip
    _fails_cleanly(["train", "--dataset", str(tmp_path), "--out", str(tmp_path / "p.pt")], capsys, "not a Minari")


@pytest.mark.parametrize(("name", "env_id", "ref_max"), [("hopper-medium", "Hopper-v5", 3234.3),
                                                         ("halfcheetah-medium", "HalfCheetah-v5", 12135.0),
                                                         ("hopper-medium-sac120k", "Hopper-v5", 3234.3),
                                                         ("walker2d-medium", "Walker2d-v5", 4592.3)])  # fmt: skip
def test_shipped_smoke_dataset_matches_its_checksum(name, env_id, ref_max):
    """The smoke-size medium sets in the package: load as Minari, checksum as in data/README.md."""
    smoke = SMOKE.parent / f"{name}-smoke"
    readme = (SMOKE.parent / "README.md").read_text()
    digest = hashlib.sha256((smoke / "data" / "main_data.hdf5").read_bytes()).hexdigest()
    assert f"`{name}-smoke/data/main_data.hdf5`: `{digest}`" in readme
    assert (SMOKE.parent / f"{name}-actor.pt").is_file()
    data = load_dataset(smoke, env_id)
    meta = data["meta"]
    assert meta["kind"] == "medium" and meta["ref_max_score"] == ref_max and meta["env"] == env_id
    assert 1000 <= len(data["rewards"]) <= 10_000
    assert (smoke / "data" / "main_data.hdf5").stat().st_size < 2_000_000


def test_d3rlpy_splits_our_data_into_our_episodes():
    """The peer reads our D4RL keys as we mean them: d3rlpy's MDPDataset cuts the shipped HalfCheetah set (time-limit
    ends flagged in ``timeouts``) into exactly the Minari episodes, with the same transitions and returns."""
    d3rlpy = pytest.importorskip("d3rlpy")
    smoke = SMOKE.parent / "halfcheetah-medium-smoke"
    episodes, _ = read_minari(smoke)
    data = load_dataset(smoke, "HalfCheetah-v5")
    ends = data["terminals"].astype(np.float32), data["timeouts"].astype(np.float32)
    ds = d3rlpy.dataset.MDPDataset(data["observations"], data["actions"], data["rewards"], ends[0], timeouts=ends[1])
    assert len(ds.episodes) == len(episodes)
    for ours, theirs in zip(episodes, ds.episodes, strict=True):
        np.testing.assert_allclose(theirs.observations, ours["observations"][:-1])
        assert float(theirs.rewards.sum()) == pytest.approx(float(ours["rewards"].sum()), rel=1e-5)


def test_dataset_verb_json_to_stdout(tmp_path, capsys):
    argv = ["vipo", "dataset", "--env", "hopper", "--kind", "random", "--transitions", "100", "--out"]
    assert icml26_main([*argv, str(tmp_path / "r"), "--json", "-"]) == 0
    cap = capsys.readouterr()
    assert json.loads(cap.out)["transitions"] == 100 and "D4RL-like" in cap.err


def test_dataset_verb_refuses_a_corrupt_or_other_recipe_checkpoint(tmp_path, capsys):
    """Resuming from OUT.work: a corrupt state file is named; a run made with another --medium-score (or evaluation
    schedule) is refused rather than reused. Both are refused before any training."""
    pytest.importorskip("stable_baselines3")
    from icml26.vipo.mujoco_data import _write_json_atomic

    out = tmp_path / "hopper-medium"
    work = tmp_path / "hopper-medium.work"
    work.mkdir()
    (work / "state.json").write_text("{task: hopper")
    argv = ["dataset", "--env", "hopper", "--kind", "medium", "--transitions", "100", "--out", str(out)]
    _fails_cleanly(argv, capsys, f"checkpoint state {work / 'state.json'} is not readable")
    state = {"task": "hopper", "env": "Hopper-v5", "seed": 0, "recipe": dataclasses.asdict(BehaviourRecipe()),
             "steps": 5000, "evals": [[5000, 300.0, 9.8]], "latest": "sac_5000.zip", "medium": "sac_5000.zip",
             "medium_reached": True}  # fmt: skip
    _write_json_atomic(work / "state.json", state)
    _fails_cleanly([*argv, "--medium-score", "40"], capsys, "another recipe (medium-score 33.0 -> 40.0)")
    _write_json_atomic(work / "state.json", {**state, "medium_reached": False})
    _fails_cleanly([*argv, "--medium-score", "5"], capsys, "another recipe (medium-score 33.0 -> 5.0)")
    _fails_cleanly([*argv, "--eval-every", "1000"], capsys, "eval-every 5000 -> 1000")
    _fails_cleanly([*argv, "--learning-starts", "6000"], capsys, "learning-starts 10000 -> 6000")  # not past it
    _fails_cleanly([*argv, "--work", str(out)], capsys, "is also given as --work")


def test_walker2d_medium_replay_and_medium_expert_from_one_behaviour_run(tmp_path, capsys):
    """The one-command path on Walker2d-v5 at a few hundred SAC steps: the medium set, then medium-replay (the
    replay buffer up to the medium policy) and medium-expert (half medium, half the run continued) cut from the
    same run through a shared --work; every set loads as Minari with D4RL's walker2d reference returns."""
    pytest.importorskip("stable_baselines3")
    work = tmp_path / "walker.work"
    common = ["vipo", "dataset", "--env", "walker2d", "--transitions", "100", "--max-steps", "200",
              "--eval-every", "100", "--eval-episodes", "1", "--learning-starts", "150", "--medium-score", "150",
              "--expert-steps", "300", "--work", str(work)]  # fmt: skip
    summaries = {}
    for kind in ("medium", "medium-replay", "medium-expert"):
        out = tmp_path / f"walker2d-{kind}"
        assert icml26_main([*common, "--kind", kind, "--out", str(out), "--json", str(out) + ".json"]) == 0
        summaries[kind] = json.loads(Path(str(out) + ".json").read_text())
        data = load_dataset(out, "Walker2d-v5")
        assert data["meta"]["kind"] == kind and data["meta"]["ref_max_score"] == D4RL_REF["walker2d"][1] == 4592.3
        assert data["observations"].shape == (100, 17) and data["actions"].shape == (100, 6)
    capsys.readouterr()
    state = json.loads((work / "state.json").read_text())
    assert [e[0] for e in state["evals"]] == [100, 200, 300]  # one run: medium at 200 steps, continued to 300
    medium = summaries["medium"]["behaviour"]
    assert medium["sac_steps"] == 200 and not medium["medium_reached"]  # 150 normalised: the best of 100/200 stands in
    assert summaries["medium-expert"]["behaviour"]["expert_checkpoint"] == "sac_300.zip"
    assert summaries["medium-expert"]["behaviour"]["medium_checkpoint"] == medium["medium_checkpoint"]
    replay, _ = read_minari(tmp_path / "walker2d-medium-replay")
    # the replay buffer's last 100 of the 200 transitions SAC saw before the medium policy, actions in the bounds
    assert sum(len(e["rewards"]) for e in replay) == 100 and all((np.abs(e["actions"]) <= 1).all() for e in replay)
