import numpy as np
import pytest

from icml26.gpm.calibrate import CalibrationWarning, calibrate, flag_items
from icml26.gpm.data import random_bank
from icml26.gpm.irt import ItemBank


def test_2pl_recovery_with_missing_values():
    rng = np.random.default_rng(0)
    true = random_bank(25, rng)
    x = true.sample(rng.normal(size=1500), rng)
    x[rng.random(x.shape) < 0.2] = np.nan
    bank, kept = calibrate(x, "2pl")
    assert kept.tolist() == list(range(25))
    assert np.corrcoef(bank.b, true.b)[0, 1] > 0.97
    assert np.mean(np.abs(bank.b - true.b)) < 0.15
    assert np.mean(np.abs(bank.a[:, 0] - true.a[:, 0])) < 0.2


def test_1pl_shares_one_discrimination():
    rng = np.random.default_rng(1)
    true = ItemBank(np.full(15, 1.3), rng.normal(size=15), model="1pl")
    bank, _ = calibrate(true.sample(rng.normal(size=1000), rng), "1pl")
    assert np.ptp(bank.a) == 0
    assert bank.a[0, 0] == pytest.approx(1.3, abs=0.2)


def test_3pl_fit_is_finite_and_close():
    rng = np.random.default_rng(2)
    true = random_bank(20, rng, "3pl")
    bank, _ = calibrate(true.sample(rng.normal(size=1500), rng), "3pl")
    assert np.all((bank.c > 0) & (bank.c < 0.5))
    assert np.corrcoef(bank.b, true.b)[0, 1] > 0.9


def test_mirt_calibration_runs():
    rng = np.random.default_rng(3)
    true = random_bank(12, rng, "mirt2pl", n_dims=2)
    bank, _ = calibrate(true.sample(rng.normal(size=(400, 2)), rng), "mirt2pl", n_dims=2, n_quad=9, max_iter=50)
    assert bank.a.shape == (12, 2) and bank.model == "mirt2pl"
    assert np.corrcoef(bank.b, true.b)[0, 1] > 0.95  # the fit recovers the item difficulties


def test_uninformative_items_and_empty_examinees_are_excluded_with_warning():
    rng = np.random.default_rng(4)
    x = random_bank(6, rng).sample(rng.normal(size=300), rng)
    x[:, 1] = np.nan  # nobody answered
    x[:, 3] = 1.0  # everyone right
    x[5] = np.nan  # examinee with no responses
    unanswered, constant, empty = flag_items(x)
    assert unanswered.tolist() == [False, True, False, False, False, False]
    assert constant.tolist() == [False, False, False, True, False, False]
    assert empty.sum() == 1
    with pytest.warns(CalibrationWarning) as record:
        bank, kept = calibrate(x)
    assert kept.tolist() == [0, 2, 4, 5] and bank.n_items == 4
    assert len(record) == 3


def test_bad_calibration_input():
    with pytest.raises(ValueError, match="0, 1 or missing"):
        calibrate(np.array([[0, 1, 3], [1, 0, 1]]))
    with pytest.raises(ValueError, match="model"):
        calibrate(np.array([[0.0, 1.0], [1.0, 0.0]]), "4pl")


def test_calibration_agrees_with_girth_on_the_swedish_sat():
    """Cross-check against the field's library: girth's 2PL marginal maximum likelihood on real SAT answers."""
    girth = pytest.importorskip("girth")
    from icml26.gpm.data import load_swedish_sat

    try:
        x = load_swedish_sat("quant").responses[:1500, :20]
    except OSError as exc:
        pytest.skip(str(exc))
    x = x[~np.isnan(x).any(axis=1)]  # girth's MML takes complete responses
    ours, kept = calibrate(x, "2pl")
    ref = girth.twopl_mml(x.T.astype(int))  # items x examinees
    assert kept.size == 20
    assert np.corrcoef(ours.b, ref["Difficulty"])[0, 1] > 0.99
    assert np.corrcoef(ours.a[:, 0], ref["Discrimination"])[0, 1] > 0.95
    assert np.mean(np.abs(ours.b - ref["Difficulty"])) < 0.1
