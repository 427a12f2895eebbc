"""The output and device convention, checked by walking every verb's parser (issue 53, item 2 and 3).

- ``--json PATH|-`` is the shared argument (``add_json_argument``): ``-`` sends the JSON to standard output and
  everything else the verb prints to standard error, so ``... --json - | jq`` reads one document.
- Every verb that computes numbers has ``--json``; the verbs without one are listed below with the reason.
- The primary file a verb writes is ``--out`` (checkpoints included); ``--checkpoint`` only ever names an input.
  Old spellings stay one release as deprecated aliases that still work and warn.
- A torch verb takes ``--device`` and ``--threads`` from the shared resolver, or is listed below with the reason
  it runs on the CPU only.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
import warnings

import pytest

from icml26._util.cli import JSON_METAVAR, OUTPUT_DESTS, ArgumentParser, add_json_argument
from icml26._util.device import _device_name
from icml26._util.io import stdout_reserved_for_json, write_json
from icml26.registry import SYSTEMS

IMPLEMENTED = sorted(s.id for s in SYSTEMS.values() if s.implemented)

#: systems exempt while their verbs are being rebuilt (none now; a system under reconstruction may be listed here)
PENDING: set[str] = set()

#: verbs that compute no summary numbers: their output file is the result (a data set, a table, a rendering)
NO_JSON = {
    ("behaviorgeo", "report"): "renders the JSON that compare wrote",
    ("brainconverge", "brain"): "writes a synthetic data set",
    ("brainconverge", "align"): "its --out table holds every number it computes",
    ("degmetrics", "simulate"): "writes a simulated screen",
    ("degmetrics", "simulate-disk"): "writes a simulated screen",
    ("flip2", "list"): "prints the built-in names",
    ("flip2", "make-splits"): "writes split assignments",
    ("srfpt", "sample"): "writes a sampled data set",
    ("ucast", "simulate"): "writes simulated trajectories",
    ("ucast", "forecast"): "writes the ensemble forecast; 'evaluate' scores it",
    ("slmbrain", "simulate"): "writes a simulated world and its fMRI",
    ("slmbrain", "features"): "writes the features; 'encode' scores them",
    ("vipo", "make-dataset"): "writes an offline data set",
    ("vipo", "train-behaviour"): "writes a behaviour policy; 'evaluate' scores policies",
    ("dualflow", "generate"): "writes a simulated data set",
    ("eegmoce", "simulate"): "writes simulated EEG + ECG",
    ("dualflow", "embed"): "writes the latent trajectories",
    ("dualflow", "simulate"): "writes simulated future frames",
}

#: systems whose verbs import no torch
TORCH_FREE = {"degmetrics", "nanoassembly", "noisypower", "srfpt"}

#: torch verbs that run on the CPU only, and why
CPU_ONLY = {
    ("behaviorgeo", "report"): "no model: renders a JSON",
    ("brainconverge", "zoo"): "MLPs of width <= 128 on 8x8 or 28x28 digits; one CPU thread is fastest (--threads)",
    ("brainconverge", "brain"): "one reference MLP (--threads)",
    ("brainconverge", "align"): "activations of the zoo's small MLPs",
    ("brainconverge", "granger"): "no model: statistics of an alignment table",
    ("brainconverge", "report"): "no model: statistics of an alignment table",
    ("flip2", "list"): "no model",
    ("flip2", "make-splits"): "no model",
    ("gpm", "calibrate"): "a torch L-BFGS fit of the 2PL item parameters on the CPU (float64)",
    ("gpm", "train"): "a policy network of a few thousand weights trained on CPU",
    ("gpm", "simulate"): "a policy network of a few thousand weights",
    ("gpm", "real-data"): "no model",
    ("gpm", "session"): "no model beyond the policy's few thousand weights",
    ("qhflow2", "build-dataset"): "PySCF labels on the CPU",
    ("qhflow2", "train"): "e3nn models of molecules up to 30 atoms trained beside PySCF labels on the CPU; a device "
    "path is not built (--threads)",
    ("qhflow2", "evaluate"): "E and F go through PySCF on the CPU (--threads for the model)",
    ("qhflow2", "predict"): "E and F go through PySCF on the CPU (--threads for the model)",
    ("ucast", "simulate"): "NumPy flow simulator",
    ("ucast", "evaluate"): "no model: scores of a forecast file",
    ("zolangevin", "sample"): "NumPy samplers on analytic targets",
    ("slmbrain", "simulate"): "a toy grammar world and small GRU language models",
    ("slmbrain", "encode"): "no LM: ridge regression on saved features",
    ("slmbrain", "alice"): "ridge encoding of word states on the CPU; SmolLM2's states are computed on the CPU "
    "(a device path for them is not built)",
    ("eegmoce", "train"): "the Lorentz experts run in float64, which consumer GPUs do slowly; CPU only",
    ("eegmoce", "explain"): "reads a checkpoint trained on the CPU in float64",
    ("slmbrain", "probe"): "linear probes on small models' states",
    ("vipo", "make-dataset"): "Pendulum/toy data from a small behaviour policy",
    ("vipo", "dataset"): "SB3 SAC on MuJoCo, whose simulator runs on the CPU",
    ("vipo", "train"): "ensembles of small MLPs beside a CPU simulator; their random draws use CPU torch generators, "
    "so a device path is not built (--threads)",
    ("vipo", "evaluate"): "rollouts of a small actor in a CPU simulator",
    ("vipo", "train-behaviour"): "a small SAC on Pendulum",
    ("hyperhopfield", "fields"): "no torch: NumPy place fields",
    ("hyperhopfield", "geometry"): "no torch: NumPy/ripser Betti curves",
    ("hyperhopfield", "capacity"): "the Hopfield memories of a few hundred patterns run on CPU",
    ("hyperhopfield", "decode"): "no torch: a NumPy Bayesian decoder",
    ("smoothspike", "finetune"): "a one-layer spiking encoder of MiniLM width trained for minutes on the CPU; a device "
    "path is not built (--threads)",
    ("smoothspike", "analyze"): "one forward pass of a checkpoint (--threads)",
    ("smoothspike", "fuse"): "folds the rotation into the weights (--threads)",
    ("coherence", "score"): "scores saved codes with NumPy/ripser",
    ("dualflow", "generate"): "NumPy simulators",
    ("eegmoce", "simulate"): "NumPy simulator",
    ("spik4lite", "train"): "a 14k-parameter spiking CNN; one CPU thread is fastest (--threads)",
    ("spik4lite", "refactor"): "removes channels from a small checkpoint (--threads)",
    ("spik4lite", "profile"): "CPU latency of dense vs compact kernels is what it measures (--threads)",
}


#: verbs whose only outputs besides --json are secondary files under their own names (no primary --out), and why
SECONDARY_OUTPUTS = {
    ("brainconverge", "report"): "--plot is a figure beside the JSON summary",
    ("nanoassembly", "assemble"): "--render is a picture of the assembly beside the JSON summary",
}

#: CPU_ONLY reasons that mean "no torch work", so no --threads either; every other CPU-only verb takes --threads
THREADLESS = ("no model", "no torch", "no LM", "NumPy", "PySCF", "scores saved codes")


def _verbs(system_id: str) -> dict[str, argparse.ArgumentParser]:
    from cli_harness import verbs

    return verbs(importlib.import_module(f"{SYSTEMS[system_id].module}.cli").build_parser())


def _option(parser: argparse.ArgumentParser, flag: str) -> argparse.Action | None:
    return next((a for a in parser._actions if flag in a.option_strings), None)


@pytest.mark.parametrize("system_id", IMPLEMENTED)
def test_every_verb_follows_the_output_convention(system_id):
    problems = []
    for verb, parser in _verbs(system_id).items():
        where = f"{system_id} {verb}"
        if system_id in PENDING:
            continue
        checkpoint = _option(parser, "--checkpoint")
        if checkpoint is not None and checkpoint.dest != "out" and getattr(checkpoint, "output", False):
            problems.append(f"{where}: --checkpoint names a file the verb writes; the convention calls it --out")
        if checkpoint is not None and checkpoint.dest == "out" and "--checkpoint" not in checkpoint.deprecated:
            problems.append(f"{where}: --checkpoint as the output must be a deprecated alias of --out")
        js = _option(parser, "--json")
        if js is None and (system_id, verb) not in NO_JSON:
            problems.append(f"{where}: computes numbers but has no --json PATH|- (or list it in NO_JSON)")
        if js is not None and not (getattr(js, "json_output", False) and js.metavar == JSON_METAVAR):
            problems.append(f"{where}: --json is not the shared add_json_argument (PATH|-)")
        device = _option(parser, "--device")
        if device is not None and (device.type is not _device_name or _option(parser, "--threads") is None):
            problems.append(f"{where}: --device/--threads must come from add_device_arguments")
        if device is None and system_id not in TORCH_FREE and (system_id, verb) not in CPU_ONLY:
            problems.append(f"{where}: a torch verb without --device/--threads (or list it in CPU_ONLY)")
        writes = [
            a for a in parser._actions if a.dest != "json" and (a.dest in OUTPUT_DESTS or getattr(a, "output", 0))
        ]
        if writes and _option(parser, "--out") is None and (system_id, verb) not in SECONDARY_OUTPUTS:
            names = ", ".join(a.option_strings[0] for a in writes)
            problems.append(f"{where}: writes {names} but has no --out (the primary file; an old name is deprecated)")
        reason = CPU_ONLY.get((system_id, verb), "")
        cpu_torch = reason and not reason.startswith(THREADLESS)
        if cpu_torch and _option(parser, "--threads") is None:
            problems.append(f"{where}: a CPU-only torch verb without --threads (add_threads_argument)")
    assert not problems, "\n".join(problems)


def test_the_exemption_lists_name_real_verbs():
    """A renamed or removed verb must leave the lists too, so they never exempt what no longer exists."""
    for system_id, verb in {*NO_JSON, *CPU_ONLY}:
        if system_id not in PENDING:
            assert verb in _verbs(system_id), f"{system_id} {verb} is listed but is not a verb"
    for system_id, verb in CPU_ONLY:
        assert _option(_verbs(system_id)[verb], "--device") is None, f"{system_id} {verb} has --device: unlist it"
    for system_id, verb in NO_JSON:
        assert _option(_verbs(system_id)[verb], "--json") is None, f"{system_id} {verb} has --json: unlist it"
    for system_id, verb in SECONDARY_OUTPUTS:
        assert verb in _verbs(system_id), f"{system_id} {verb} is listed but is not a verb"


def test_the_walker_catches_a_private_json_and_an_output_checkpoint(monkeypatch):
    parser = ArgumentParser()
    sub = parser.add_subparsers(dest="verb")
    p = sub.add_parser("fit")  # in no exemption list
    p.add_argument("--checkpoint", output=True, help="checkpoint to write")
    p.add_argument("--json", help="write JSON")

    class Fake:
        @staticmethod
        def build_parser():
            return parser

    monkeypatch.setattr(importlib, "import_module", lambda name: Fake)
    with pytest.raises(AssertionError) as err:
        test_every_verb_follows_the_output_convention("gpm")
    text = str(err.value)
    assert "calls it --out" in text and "not the shared add_json_argument" in text and "without --device" in text


def test_a_deprecated_alias_still_works_and_warns():
    parser = ArgumentParser(prog="x")
    parser.add_argument("--out", "--checkpoint", deprecated=("--checkpoint",), help="checkpoint to write")
    with pytest.warns(FutureWarning, match=r"--checkpoint is deprecated .* use --out"):
        assert parser.parse_args(["--checkpoint", "a.pt"]).out == "a.pt"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert parser.parse_args(["--out", "b.pt"]).out == "b.pt"  # the new spelling is silent
    assert "old spelling" in parser.format_help()
    with pytest.raises(ValueError, match="not among the option strings"):
        parser.add_argument("--x", deprecated=("--y",))


def test_json_goes_to_a_file_or_alone_to_stdout(tmp_path, capsys):
    parser = ArgumentParser(prog="x")
    add_json_argument(parser, "numbers")
    assert parser.parse_args(["--json", "-"]).json == "-"
    write_json(tmp_path / "a.json", {"x": float("nan"), "y": [1, 2]})
    assert json.loads((tmp_path / "a.json").read_text()) == {"x": None, "y": [1, 2]}  # NaN is not JSON: null
    with stdout_reserved_for_json():
        print("a progress line")  # a verb's own print goes to stderr ...
        write_json("-", {"ok": True})  # ... and the JSON alone to stdout
    out, err = capsys.readouterr()
    assert json.loads(out) == {"ok": True} and "a progress line" in err


def test_json_dash_from_the_command_line_is_one_document(capsys):
    from icml26.cli import main

    assert main(["srfpt", "count", "--max-size", "3", "--json", "-"]) == 0
    out, _ = capsys.readouterr()
    assert isinstance(json.loads(out), dict | list)
    assert main(["nanoassembly", "verify", "--help"]) == 0  # help still prints to stdout
    assert "--json PATH|-" in capsys.readouterr().out


def test_json_ready_handles_numpy_and_paths(tmp_path):
    import numpy as np

    from icml26._util.io import json_ready

    value = json_ready({"a": np.float32(1.5), "b": np.arange(3), "c": tmp_path, "d": (np.inf, 1)})
    assert value == {"a": 1.5, "b": [0, 1, 2], "c": str(tmp_path), "d": [None, 1]}
    assert json.dumps(value)


def test_stdout_is_restored_after_a_failing_verb():
    before = sys.stdout
    with pytest.raises(RuntimeError), stdout_reserved_for_json():
        raise RuntimeError
    assert sys.stdout is before
