"""Contract v3 of QHFlow2's claims: the planted handicaps are exact, twins are independent, probes and measures."""

import numpy as np
import pytest
import torch

from icml26.claims import Arm, Scale
from icml26.qhflow2 import claims as C
from icml26.qhflow2.model import n_params
from icml26.qhflow2.train import evaluate_h_model, evaluate_mlip

torch.set_num_threads(1)


def test_inflating_the_errors_multiplies_the_maes_exactly():
    _, test = C._split("smoke", 0)
    mlip = C._trained("smoke", 0, "mlip")
    plain, handicapped = evaluate_mlip(mlip, test), evaluate_mlip(mlip, test, inflate=4.0)
    for key in ("E MAE [meV]", "F MAE [meV/A]"):
        assert handicapped[key] == pytest.approx(4.0 * plain[key], rel=1e-9)
    model = C._trained("smoke", 0, "so2")
    h1, h2 = evaluate_h_model(model, test, forces=False), evaluate_h_model(model, test, forces=False, inflate=2.0)
    assert h2["H MAE [uHa]"] == pytest.approx(2.0 * h1["H MAE [uHa]"], rel=1e-9)
    assert h2["E MAE [meV]"] > h1["E MAE [meV]"]  # E follows the larger H error through PySCF
    with pytest.raises(ValueError, match="inflate"):
        evaluate_mlip(mlip, test, inflate=0.5)


def test_a_twin_is_another_run_of_the_same_recipe():
    a, b = C._trained("smoke", 0, "mlip"), C._trained("smoke", 0, "mlip", stream=1)
    assert n_params(a) == n_params(b)
    assert any(not torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters()))


def test_so2_positive_plants_the_cost_saving_on_the_negatives_pair():
    negative = C.so2_matches_tp_cheaper(Scale.SMOKE, 0, Arm.NEGATIVE).measured
    positive = C.so2_matches_tp_cheaper(Scale.SMOKE, 0, Arm.POSITIVE).measured
    assert negative["params SO(2) / TP, l_max 4"] == 1.0
    assert positive["params SO(2) / TP, l_max 4"] == pytest.approx(C.COST_PLANT)
    # the same two trained tensor-product twins: the accuracy ratio is the A/A one, untouched
    assert positive["H MAE SO(2) / TP"] == pytest.approx(negative["H MAE SO(2) / TP"], rel=1e-9)


def test_mlip_positive_plants_the_handicap_on_the_negatives_pair():
    negative = C.hamiltonian_beats_mlip(Scale.SMOKE, 0, Arm.NEGATIVE).measured
    positive = C.hamiltonian_beats_mlip(Scale.SMOKE, 0, Arm.POSITIVE).measured
    key = "log10 E MAE ratio (H model / MLIP)"
    assert positive[key] == pytest.approx(negative[key] - np.log10(C.MLIP_HANDICAP), abs=1e-9)
    assert negative[key] != 0.0  # two independent MLIPs, not one model twice


def test_every_claim_has_three_arms_and_declared_mechanisms():
    names = {m.name for m in C.MECHANISMS}
    for c in C.CLAIMS:
        assert c.positive and Arm.POSITIVE in c.arms and set(c.mechanisms) <= names


def test_probes_at_smoke():
    so2 = C.so2_reduction(Scale.SMOKE, 0)
    assert so2["so2-reduction"] == pytest.approx(so2["H MAE |m| >= 1 mixing zeroed [uHa]"] / so2["H MAE intact [uHa]"])
    assert so2["params SO(2) / TP, l_max 4 (reported)"] < 0.7
    learning = C.hamiltonian_learning(Scale.SMOKE, 0)
    assert learning["hamiltonian-learning"] == pytest.approx(
        learning["H MAE trained [uHa]"] / learning["H MAE untrained [uHa]"]
    )
    # stationarity: the model's own H error costs energy at second order around the converged H, first around hcore
    stat = C.energy_stationarity(Scale.SMOKE, 0)
    assert stat["first-order share, converged H"] < 0.5 < stat["first-order share, core H"]


def test_zeroing_the_m_mixing_changes_an_so2_model_and_keeps_m0():
    from icml26.qhflow2.model import SO2Linear

    model = C._trained("smoke", 0, "so2")
    ablated = C._without_m_mixing(model)
    layers = [m for m in ablated.modules() if isinstance(m, SO2Linear)]
    assert layers and all(float(w.weight.detach().abs().sum()) == 0.0 for layer in layers for w in layer.w[1:])
    assert all(float(layer.w[0].weight.detach().abs().sum()) > 0.0 for layer in layers)
    intact = [w for m in model.modules() if isinstance(m, SO2Linear) for w in m.w[1:]]
    assert any(float(w.weight.detach().abs().sum()) > 0.0 for w in intact)


@pytest.mark.parametrize("seed", [0, 1])
def test_measures_see_the_effect_and_its_absence(seed):
    for m in C.MEASURES:
        assert m.check(seed) == [], m.name
