import io

import numpy as np
import pytest

from icml26.gpm import AdaptiveTest, KLISelector, MFISelector
from icml26.gpm.cli import main
from icml26.gpm.data import random_bank, save_bank_csv
from icml26.gpm.irt import estimate_ability


def _run(test, theta, rng, bank):
    while not test.done:
        item = test.next_item()
        assert test.next_item() == item  # stable until recorded
        test.record(item, rng.random() < bank.prob(theta)[0, item])


def test_session_matches_batch_estimate_and_stops_by_length():
    rng = np.random.default_rng(0)
    bank = random_bank(60, rng)
    test = AdaptiveTest(bank, MFISelector(), max_items=12)
    _run(test, 0.5, rng, bank)
    assert len(test.items) == 12 and len(set(test.items)) == 12
    x = np.full((1, 60), np.nan)
    x[0, test.items] = test.responses
    theta, se = estimate_ability(bank, x, "map")
    assert test.ability == pytest.approx(theta[0]) and test.standard_error == pytest.approx(se[0])
    with pytest.raises(RuntimeError):
        test.next_item()


def test_session_stops_by_standard_error():
    rng = np.random.default_rng(1)
    bank = random_bank(200, rng)
    test = AdaptiveTest(bank, KLISelector(), max_items=200, se_target=0.45, method="eap")
    _run(test, -0.3, rng, bank)
    assert test.standard_error <= 0.45 and len(test.items) < 40


def test_session_bad_input():
    bank = random_bank(5, np.random.default_rng(2))
    with pytest.raises(ValueError, match="bank holds 5"):
        AdaptiveTest(bank, max_items=6)
    test = AdaptiveTest(bank, max_items=3, method="mle")
    test.record(1, True)
    assert np.isfinite(test.ability)  # MLE falls back to MAP on an all-correct pattern
    with pytest.raises(ValueError, match="already answered"):
        test.record(1, False)
    with pytest.raises(ValueError, match="not in the bank"):
        test.record(7, False)
    with pytest.raises(ValueError, match="True/False"):
        test.record(2, "maybe")


def test_cli_session_reads_stdin(tmp_path, capsys, monkeypatch):
    bank = random_bank(30, np.random.default_rng(3))
    save_bank_csv(bank, tmp_path / "bank.csv")
    monkeypatch.setattr("sys.stdin", io.StringIO("y\nmaybe\nn\ny\n"))
    assert main(["session", "--bank", str(tmp_path / "bank.csv"), "--max-items", "5"]) == 0
    out = capsys.readouterr().out
    assert "please answer y or n" in out and "final ability" in out and "3 items" in out
    monkeypatch.setattr("sys.stdin", io.StringIO("n\nq\n"))
    assert main(["session", "--bank", str(tmp_path / "bank.csv"), "--selector", "kli"]) == 0
    assert "1 items" in capsys.readouterr().out
