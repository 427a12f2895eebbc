"""``icml26 behaviorgeo`` verbs end to end on the tiny test model, and the bad inputs the issue names:
exit 2, one line, no output file."""

import json

import pytest

from icml26.cli import main as icml26_main

TINY = ["--model", "tiny", "--vocab", "20", "--batch", "8"]


def _fails_cleanly(argv, capsys, must_not_exist=(), match=""):
    code = icml26_main(["behaviorgeo", *argv])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert match in err, err
    assert not any(p.exists() for p in must_not_exist)
    return err


@pytest.fixture(scope="module")
def stores(tmp_path_factory):
    d = tmp_path_factory.mktemp("bg")
    assert icml26_main(["behaviorgeo", "run", *TINY, "--paradigm", "fc", "--out", str(d / "fc"), "--max-trials", "8",
                        "--json", str(d / "fc.json")]) == 0  # fmt: skip
    assert json.loads((d / "fc.json").read_text())["trials"] == 8
    assert icml26_main(["behaviorgeo", "run", *TINY, "--paradigm", "fc", "--resume", str(d / "fc")]) == 0
    assert icml26_main(["behaviorgeo", "run", *TINY, "--paradigm", "fa", "--runs", "1", "--max-new-tokens", "6",
                        "--out", str(d / "fa"), "--json", str(d / "fa.json")]) == 0  # fmt: skip
    fa = json.loads((d / "fa.json").read_text())
    assert fa["trials"] == 20 and {"unparsable", "out_of_vocabulary", "responses"} <= set(fa)
    return d


def test_compare_and_report(stores, tmp_path, capsys):
    cmp = tmp_path / "cmp.json"
    argv = ["behaviorgeo", "compare", "--trials", str(stores / "fc"), str(stores / "fa"), "--model", "tiny",
            "--strategy", "task-fc", "--baselines", "none", "--k", "3", "--json", str(cmp)]  # fmt: skip
    assert icml26_main(argv) == 0
    data = json.loads(cmp.read_text())
    assert "fc:fc" in data["rows"] and data["stats"]["fc:fc"]["trials"] == 40
    assert "fa:fa" in data["rows"] or any(n.startswith("fa:fa: only") for n in data["notes"])
    assert len(data["rows"]["fc:fc"]["rsa_by_layer"]) == 3  # embedding + 2 layers of the tiny model
    md, png = tmp_path / "r.md", tmp_path / "r.png"
    assert icml26_main(["behaviorgeo", "report", "--compare", str(cmp), "--out", str(md), "--plot", str(png)]) == 0
    assert "| fc:fc |" in md.read_text() and png.stat().st_size > 1000
    assert "peak RSA" in capsys.readouterr().out
    md.unlink()  # the old spelling works one release and warns (on the command line: a one-line warning)
    assert icml26_main(["behaviorgeo", "report", "--compare", str(cmp), "--md", str(md)]) == 0
    assert "| fc:fc |" in md.read_text() and "--md is deprecated" in capsys.readouterr().err


def test_bad_inputs_named_by_the_issue(stores, tmp_path, capsys):
    # a resumed run with a different configuration is refused
    _fails_cleanly(["run", *TINY, "--paradigm", "fc", "--shuffles", "2", "--resume", str(stores / "fc")], capsys,
                   match="different configuration (shuffles")  # fmt: skip
    _fails_cleanly(["run", *TINY, "--paradigm", "fa", "--resume", str(stores / "fc")], capsys,
                   match="different configuration")  # fmt: skip
    _fails_cleanly(["run", *TINY, "--paradigm", "fc", "--out", str(stores / "fc")], capsys, match="--resume")
    # a model without a chat template
    from icml26.behaviorgeo.data import vocabulary
    from icml26.behaviorgeo.lm import tiny_lm

    model, tok = tiny_lm(vocabulary(20), chat_template=False)
    folder = tmp_path / "nochat"
    model.save_pretrained(folder)
    tok.save_pretrained(folder)
    capsys.readouterr()
    out = tmp_path / "s"
    _fails_cleanly(["run", "--model", str(folder), "--vocab", "20", "--paradigm", "fc", "--out", str(out)], capsys,
                   [out], "no chat template")  # fmt: skip
    assert icml26_main(["behaviorgeo", "run", "--model", str(folder), "--vocab", "20", "--paradigm", "fc",
                        "--plain-prompt", "--max-trials", "2", "--out", str(out)]) == 0  # fmt: skip
    # unparsable generations are kept and counted (the tiny model babbles)
    run_out = capsys.readouterr().out
    assert "unparsable" in run_out
    # not a store, a bad vocabulary file, an unknown model
    _fails_cleanly(["compare", "--trials", str(tmp_path), "--model", "tiny", "--json", str(tmp_path / "c.json")],
                   capsys, [tmp_path / "c.json"], "not a trial store")  # fmt: skip
    vf = tmp_path / "v.txt"
    vf.write_text("cat\ndog\ncat\n")
    argv = ["run", "--model", "tiny", "--vocab-file", str(vf), "--paradigm", "fa", "--out", str(tmp_path / "x")]
    _fails_cleanly(argv, capsys, [tmp_path / "x"], "twice")
    _fails_cleanly(["run", "--model", str(tmp_path), "--paradigm", "fa", "--out", str(tmp_path / "y")], capsys,
                   [tmp_path / "y"], "not 'smollm2'")  # fmt: skip
    _fails_cleanly(["compare", "--trials", str(stores / "fc"), "--model", "tiny", "--baselines", "fasttext", "--json",
                    str(tmp_path / "c.json")], capsys, [tmp_path / "c.json"], "unknown baseline")  # fmt: skip
    _fails_cleanly(["report", "--compare", str(stores / "fc.json")], capsys, [], "not a JSON written by")


@pytest.mark.slow
def test_out_of_vocabulary_words_for_glove_are_reported(tmp_path, capsys):
    vf = tmp_path / "v.txt"
    words = "dog cat horse cow apple banana bread cheese car bus train truck hammer knife saw drill shirt zqxjword"
    vf.write_text("\n".join(words.split()) + "\n")
    run = ["behaviorgeo", "run", "--model", "tiny", "--vocab-file", str(vf), "--batch", "8"]
    assert icml26_main([*run, "--paradigm", "fc", "--out", str(tmp_path / "fc")]) == 0
    cmp = tmp_path / "c.json"
    argv = ["behaviorgeo", "compare", "--trials", str(tmp_path / "fc"), "--model", "tiny", "--baselines", "glove",
            "--json", str(cmp)]  # fmt: skip
    assert icml26_main(argv) == 0
    notes = json.loads(cmp.read_text())["notes"]
    assert notes and "1 of 18 words out of vocabulary (zqxjword)" in notes[0]
    assert "zqxjword" in capsys.readouterr().out


def test_bad_arguments_fail_before_torch_is_imported(tmp_path):
    """A bad vocabulary file is refused in well under a second: the run verb imports torch and transformers only
    once its arguments are known to be good (and report never does)."""
    import subprocess
    import sys

    vf = tmp_path / "v.txt"
    vf.write_text("cat\ndog\ncat\n")
    code = (
        "import sys\nfrom icml26.behaviorgeo.cli import main\n"
        f"try:\n    main(['run', '--vocab-file', {str(vf)!r}, '--paradigm', 'fa', '--out', {str(tmp_path / 'x')!r}])\n"
        "except ValueError as e:\n    print('refused:', e)\n"
        "print('torch' in sys.modules, 'transformers' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60).stdout
    assert "refused:" in out and "twice" in out and out.strip().endswith("False False"), out


def test_trial_table_with_a_cue_outside_its_vocabulary_is_refused():
    import pandas as pd

    from icml26.behaviorgeo.lm import trial_counts

    df = pd.DataFrame({"cue": ["cat", "zebra"], "pick1": ["dog", "dog"], "pick2": ["cow", "cow"]})
    with pytest.raises(ValueError, match="cue 'zebra' outside its vocabulary"):
        trial_counts(df, ["cat", "dog", "cow"], "fc")


def test_temperature_is_bounded(tmp_path, capsys):
    _fails_cleanly(["run", *TINY, "--paradigm", "fa", "--temperature", "1e300", "--out", str(tmp_path / "x")],
                   capsys, [tmp_path / "x"], "--temperature")  # fmt: skip


@pytest.mark.parametrize("top_p", ["0", "1.5", "nan"])
def test_top_p_is_bounded(tmp_path, capsys, top_p):
    _fails_cleanly(["run", *TINY, "--paradigm", "fa", "--top-p", top_p, "--out", str(tmp_path / "x")],
                   capsys, [tmp_path / "x"], "--top-p")  # fmt: skip


def test_geometry_without_an_rsa_is_named_with_its_out_of_vocabulary_count():
    """Mostly out-of-vocabulary answers leave a behavioural geometry constant: no RSA, and the note says how many
    answers were out of vocabulary (it used to be numpy's 'All-NaN slice')."""
    from icml26.behaviorgeo.cli import _undefined_rsa_note

    note = _undefined_rsa_note("fa:x", 3, {"responses": 4, "out_of_vocabulary": 57, "unparsable": 2})
    assert "RSA undefined" in note and "57 answers were out of vocabulary" in note and "4 counted" in note
    assert "out of vocabulary" not in _undefined_rsa_note("glove", 3, None)


def test_help_loads_no_scipy_torch_or_pandas():
    import subprocess
    import sys

    probe = (
        "import sys\nfrom icml26.behaviorgeo.cli import build_parser\nbuild_parser()\n"
        "print([m for m in ('torch', 'transformers', 'pandas', 'scipy') if m in sys.modules])\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60).stdout
    assert out.strip() == "[]", out


def test_a_store_named_like_the_paradigm_is_not_an_input(tmp_path, monkeypatch):
    """'run --paradigm fc --out fc' (the README's own line): the choice word is not a file the output would
    overwrite."""
    from icml26.behaviorgeo.cli import build_parser

    monkeypatch.chdir(tmp_path)
    args = build_parser().parse_args(["run", "--model", "tiny", "--paradigm", "fc", "--out", "fc"])
    assert args.paradigm == "fc" and str(args.out) == "fc"


def test_run_reports_speed_and_flops_and_runs_trials_per_cue(tmp_path, capsys):
    out, js = tmp_path / "fc", tmp_path / "fc.json"
    argv = ["behaviorgeo", "run", *TINY, "--paradigm", "fc", "--trials-per-cue", "1", "--scoring", "word",
            "--calibrate", "--out", str(out), "--json", str(js)]  # fmt: skip
    assert icml26_main(argv) == 0
    data = json.loads(js.read_text())
    assert data["trials"] == data["new_trials"] == 20 and data["trials_per_s"] > 0 and data["gflop_per_trial"] > 0
    assert "trials/s" in capsys.readouterr().out
    _fails_cleanly(["run", *TINY, "--paradigm", "fc", "--scoring", "first", "--out", str(tmp_path / "x")], capsys,
                   [tmp_path / "x"], "--scoring")  # fmt: skip


def test_run_takes_a_dtype_and_refuses_an_unknown_one(tmp_path, capsys):
    js = tmp_path / "fc.json"
    argv = ["behaviorgeo", "run", *TINY, "--paradigm", "fc", "--max-trials", "4", "--dtype", "bfloat16", "--out",
            str(tmp_path / "fc"), "--json", str(js)]  # fmt: skip
    assert icml26_main(argv) == 0 and json.loads(js.read_text())["dtype"] == "bfloat16"
    _fails_cleanly(["run", *TINY, "--paradigm", "fc", "--dtype", "float32", "--resume", str(tmp_path / "fc")],
                   capsys, match="dtype")  # fmt: skip
    _fails_cleanly(["run", *TINY, "--paradigm", "fc", "--dtype", "float16", "--out", str(tmp_path / "x")], capsys,
                   [tmp_path / "x"], "--dtype")  # fmt: skip


@pytest.mark.slow  # inductor compiles C++ kernels
def test_run_compile_fuses_the_model_and_still_writes_its_trials(tmp_path, capsys):
    out, js = tmp_path / "fc", tmp_path / "fc.json"
    argv = ["behaviorgeo", "run", "--model", "tiny", "--vocab", "20", "--paradigm", "fc", "--compile", "--max-trials",
            "3", "--out", str(out), "--json", str(js)]  # fmt: skip
    assert icml26_main(argv) == 0
    assert json.loads(js.read_text())["trials"] == 3 and "3 new trials" in capsys.readouterr().out


def test_run_cue_ranges_split_the_design_into_stores_that_concatenate(tmp_path, capsys):
    import pandas as pd

    from icml26.behaviorgeo.data import vocabulary
    from icml26.behaviorgeo.lm import TrialStore

    def trials(folder):
        return TrialStore(folder, json.loads((folder / "config.json").read_text())).read()

    for paradigm, key, extra in (("fc", "trial", ["--trials-per-cue", "2"]), ("fa", "run", ["--runs", "2"])):
        base = ["behaviorgeo", "run", *TINY, "--paradigm", paradigm, *extra]
        assert icml26_main([*base, "--out", str(tmp_path / f"{paradigm}-all")]) == 0
        assert icml26_main([*base, "--cues", "0:12", "--out", str(tmp_path / f"{paradigm}-a")]) == 0
        assert icml26_main([*base, "--cues", "12:20", "--out", str(tmp_path / f"{paradigm}-b")]) == 0
        whole = trials(tmp_path / f"{paradigm}-all").sort_values(key)
        parts = pd.concat([trials(tmp_path / f"{paradigm}-a"), trials(tmp_path / f"{paradigm}-b")]).sort_values(key)
        assert list(parts[key]) == list(whole[key])  # the same trial ids, each once
        assert set(trials(tmp_path / f"{paradigm}-b").cue) == set(vocabulary(20)[12:])
        if paradigm == "fc":  # scoring is deterministic: the same picks
            assert list(parts.pick1) == list(whole.pick1)
    # a resumed ranged store keeps its range; another range is refused
    assert icml26_main(["behaviorgeo", "run", *TINY, "--paradigm", "fc", "--trials-per-cue", "2", "--cues", "12:20",
                        "--resume", str(tmp_path / "fc-b")]) == 0  # fmt: skip
    capsys.readouterr()
    _fails_cleanly(["run", *TINY, "--paradigm", "fc", "--trials-per-cue", "2", "--cues", "0:20", "--resume",
                    str(tmp_path / "fc-b")], capsys, [], "cues")  # fmt: skip
    for bad, what in (("5:5", "START:STOP"), ("a:3", "START:STOP"), ("7", "START:STOP"), ("0:21", "past")):
        _fails_cleanly(["run", *TINY, "--paradigm", "fa", "--cues", bad, "--out", str(tmp_path / "x")], capsys,
                       [tmp_path / "x"], what)  # fmt: skip
    _fails_cleanly(["run", "--model", "tiny", "--paradigm", "fa", "--vocab-v5", "--vocab-file", str(tmp_path / "v"),
                    "--out", str(tmp_path / "x")], capsys, [tmp_path / "x"], "not both")  # fmt: skip
