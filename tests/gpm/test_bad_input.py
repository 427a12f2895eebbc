"""Issue 20 for gpm: items matched by name, bad banks refused, outputs safe, policies loaded weights-only."""

from pathlib import Path

import numpy as np
import pytest
import torch

from icml26 import cli
from icml26.gpm.data import align_responses, load_bank_csv, load_responses_csv

DATA = Path(__file__).resolve().parent / "data"
RESPONSES = DATA / "responses.csv"


def _run(capsys, *argv):
    code = cli.main(["gpm", *argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def bank(tmp_path_factory):
    path = tmp_path_factory.mktemp("gpm") / "bank.csv"
    assert cli.main(["gpm", "calibrate", str(RESPONSES), "--out", str(path)]) == 0
    return path


def _reversed_csv(tmp_path) -> Path:
    lines = RESPONSES.read_text().splitlines()
    out = tmp_path / "reversed.csv"
    out.write_text("\n".join(",".join(line.split(",")[::-1]) for line in lines) + "\n")
    return out


def test_columns_are_matched_to_bank_items_by_name(bank, tmp_path, capsys):
    rev = _reversed_csv(tmp_path)
    x, _ = load_responses_csv(RESPONSES)
    xr, names_r = load_responses_csv(rev)
    _, bank_names = load_bank_csv(bank)
    np.testing.assert_array_equal(align_responses(xr, names_r, bank_names), x)
    args = ["simulate", "--bank", str(bank), "--selector", "random,mfi", "--length", "3", "--seed", "2"]
    code, out_plain, _ = _run(capsys, *args, "--responses", str(RESPONSES))
    assert code == 0
    code, out_rev, _ = _run(capsys, *args, "--responses", str(rev))
    assert code == 0 and out_rev == out_plain  # reversing the columns changes nothing


def test_mismatched_or_duplicate_item_names_are_refused(bank, tmp_path, capsys):
    lines = RESPONSES.read_text().splitlines()
    other = tmp_path / "other.csv"
    other.write_text("\n".join([lines[0].replace("q1", "z1"), *lines[1:]]) + "\n")
    code, _, err = _run(
        capsys,
        "train",
        "--bank",
        str(bank),
        "--responses",
        str(other),
        "--length",
        "2",
        "--epochs",
        "1",
        "--out",
        str(tmp_path / "p.pt"),
    )
    assert code == 2 and "missing ['q1']" in err and not (tmp_path / "p.pt").exists()
    dup = tmp_path / "dup.csv"
    dup.write_text("\n".join([lines[0].replace("q2", "q1"), *lines[1:]]) + "\n")
    with pytest.raises(ValueError, match="duplicate item names \\['q1'\\]"):
        load_responses_csv(dup)
    text = bank.read_text().splitlines()
    dup_bank = tmp_path / "dup_bank.csv"
    dup_bank.write_text("\n".join([text[0], text[1], text[1], *text[2:]]) + "\n")
    code, _, err = _run(capsys, "session", "--bank", str(dup_bank), "--answers", str(DATA / "answers.txt"))
    assert code == 2 and "duplicate item names" in err


@pytest.mark.parametrize(
    ("c", "message"), [("-0.2", "must lie in \\[0, 1\\)"), ("1.5", "must lie in"), ("nan", "not a finite number")]
)
def test_bad_guessing_parameters_are_refused(tmp_path, c, message):
    path = tmp_path / "bank.csv"
    path.write_text(f"item,a,b,c,model\nq1,1.0,0.0,{c},3pl\nq2,1.2,0.5,{c},3pl\n")
    with pytest.raises(ValueError, match=message):
        load_bank_csv(path)


def test_epochs_zero_is_refused_before_an_existing_policy_is_touched(bank, tmp_path, capsys):
    policy = tmp_path / "p.pt"
    policy.write_bytes(b"previous policy")
    code, _, err = _run(
        capsys, "train", "--bank", str(bank), "--responses", str(RESPONSES), "--epochs", "0", "--out", str(policy)
    )
    assert code == 2 and "--epochs" in err and policy.read_bytes() == b"previous policy"
    code, _, err = _run(capsys, "calibrate", str(RESPONSES), "--out", str(tmp_path / "missing" / "b.csv"))
    assert code == 2 and "does not exist" in err


def test_policy_round_trips_weights_only_and_foreign_files_are_named(bank, tmp_path, capsys):
    policy = tmp_path / "p.pt"
    code, _, _ = _run(
        capsys,
        "train",
        "--bank",
        str(bank),
        "--responses",
        str(RESPONSES),
        "--length",
        "2",
        "--epochs",
        "1",
        "--out",
        str(policy),
    )
    assert code == 0
    blob = torch.load(policy, weights_only=True)
    assert blob["version"] == 3 and isinstance(blob["bank"]["a"], torch.Tensor)
    code, out, _ = _run(
        capsys,
        "session",
        "--bank",
        str(bank),
        "--selector",
        "gpm",
        "--policy",
        str(policy),
        "--max-items",
        "2",
        "--answers",
        str(DATA / "answers.txt"),
    )
    assert code == 0 and "final ability" in out
    torch.save({"x": np.zeros(2)}, tmp_path / "evil.pt")
    for path in (tmp_path / "evil.pt", tmp_path):
        code, _, err = _run(capsys, "session", "--bank", str(bank), "--selector", "gpm", "--policy", str(path))
        assert code == 2 and str(path) in err and err.count("\n") == 1 and "Traceback" not in err


@pytest.mark.parametrize(
    ("content", "message"),
    [(b"caf\xe9,b\n1,0\n", "not UTF-8"), (b"", "empty|no items"), (None, "is a directory")],
)
def test_unreadable_csv_files_are_named(tmp_path, content, message):
    path = tmp_path / "r.csv"
    if content is None:
        path.mkdir()
    else:
        path.write_bytes(content)
    with pytest.raises((ValueError, OSError), match=message):
        load_responses_csv(path)
    with pytest.raises((ValueError, OSError), match=message):
        load_bank_csv(path)


def test_api_entry_points_check_types():
    from icml26.gpm.data import simulate
    from icml26.gpm.evaluate import evaluate_selectors, run_cat, split_pool
    from icml26.gpm.selectors import MFISelector
    from icml26.gpm.session import AdaptiveTest

    rng = np.random.default_rng(0)
    d = simulate(10, 5, rng)
    pool = np.ones_like(d.responses, dtype=bool)
    with pytest.raises(TypeError, match="selector must be a Selector object; got str 'mfi'"):
        run_cat(d.bank, "mfi", d.responses, pool, 2, rng)
    with pytest.raises(TypeError, match="selectors\\['a'\\] must be a Selector"):
        evaluate_selectors(d.bank, {"a": "mfi"}, d.responses, split_pool(d.responses, rng), 2, rng)
    with pytest.raises(TypeError, match=r"bank must be an icml26\.gpm\.irt\.ItemBank"):
        AdaptiveTest(d.responses, MFISelector())
    with pytest.raises(TypeError, match="selector must be a Selector"):
        AdaptiveTest(d.bank, "mfi")


def _long_rows(x, names):
    rows = ["student,item,correct"]
    for i, j in zip(*np.nonzero(~np.isnan(x))):
        rows.append(f"s{i},{names[j]},{int(x[i, j])}")
    return rows


def test_the_long_format_gives_the_wide_matrix(tmp_path):
    x, names = load_responses_csv(RESPONSES)
    rows = _long_rows(x, names)
    path = tmp_path / "long.csv"
    path.write_text("\n".join(rows) + "\n")
    xl, names_l = load_responses_csv(path)
    # items keep their order of first appearance; every answered cell is where the wide file has it
    assert set(names_l) == set(names)
    np.testing.assert_array_equal(xl[:, [names_l.index(n) for n in names]], x[np.isfinite(x).any(1)])
    path.write_text("\n".join([*rows, rows[1]]) + "\n")
    with pytest.raises(ValueError, match="more than once"):
        load_responses_csv(path)
    path.write_text("\n".join([*rows, "s999,q1,yes"]) + "\n")
    with pytest.raises(ValueError, match="'yes' is not 0, 1 or empty"):
        load_responses_csv(path)


def test_short_rows_and_bad_cells_are_named_not_read_as_missing(tmp_path):
    lines = RESPONSES.read_text().splitlines()
    short = tmp_path / "short.csv"
    short.write_text("\n".join([lines[0], lines[1].rsplit(",", 1)[0], *lines[2:]]) + "\n")
    with pytest.raises(ValueError, match="row 1 has"):
        load_responses_csv(short)
    bad = tmp_path / "bad.csv"
    bad.write_text("\n".join([lines[0], lines[1], lines[2].replace("1", "2", 1), *lines[3:]]) + "\n")
    with pytest.raises(ValueError, match="row 2, column"):
        load_responses_csv(bad)


def test_a_dataframe_in_either_format_reads_like_the_csv():
    pd = pytest.importorskip("pandas")
    from icml26.gpm.data import responses_from_frame

    x, names = load_responses_csv(RESPONSES)
    xw, names_w = responses_from_frame(pd.read_csv(RESPONSES))
    np.testing.assert_array_equal(xw, x)
    assert names_w == names
    long = pd.DataFrame([r.split(",") for r in _long_rows(x, names)[1:]], columns=["user", "item", "correct"])
    xl, names_l = responses_from_frame(long)
    np.testing.assert_array_equal(xl[:, [names_l.index(n) for n in names]], x[np.isfinite(x).any(1)])
    with pytest.raises(ValueError, match="is not 0, 1 or NaN"):
        responses_from_frame(pd.DataFrame({"a": [0.0, 2.0]}))
