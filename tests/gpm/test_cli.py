import numpy as np
import pytest

from icml26.gpm.cli import main
from icml26.gpm.data import load_bank_csv, random_bank, save_bank_csv


@pytest.fixture
def files(tmp_path):
    rng = np.random.default_rng(0)
    bank = random_bank(20, rng)
    x = bank.sample(rng.normal(size=300), rng)
    lines = [",".join(f"q{j}" for j in range(20))]
    lines += [",".join("" if rng.random() < 0.05 else str(int(v)) for v in row) for row in x]
    (tmp_path / "resp.csv").write_text("\n".join(lines) + "\n")
    save_bank_csv(bank, tmp_path / "true.csv")
    return tmp_path


def test_calibrate_train_simulate(files, capsys):
    assert main(["calibrate", str(files / "resp.csv"), "--out", str(files / "bank.csv")]) == 0
    bank, names = load_bank_csv(files / "bank.csv")
    assert bank.n_items == 20 and names[0] == "q0"
    argv = ["train", "--bank", str(files / "bank.csv"), "--responses", str(files / "resp.csv"), "--epochs", "1",
            "--length", "5", "--out", str(files / "p.pt")]  # fmt: skip
    assert main(argv) == 0
    argv = ["simulate", "--bank", str(files / "bank.csv"), "--policy", str(files / "p.pt"),
            "--selector", "random,mfi,gpm", "--length", "5", "--examinees", "100"]  # fmt: skip
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "gpm" in out and "RMSE(th*)" in out and "T=5" in out


def test_simulate_on_responses_trains_on_the_fly(files, capsys):
    argv = ["simulate", "--bank", str(files / "true.csv"), "--responses", str(files / "resp.csv"),
            "--selector", "bobcat,becat", "--length", "4", "--epochs", "1"]  # fmt: skip
    assert main(argv) == 0
    assert "bobcat" in capsys.readouterr().out


def test_cli_bad_input(files):
    with pytest.raises(ValueError, match="bank holds 20"):
        main(["simulate", "--bank", str(files / "true.csv"), "--selector", "mfi", "--length", "21"])
    with pytest.raises(ValueError, match="unknown selector"):
        main(["simulate", "--bank", str(files / "true.csv"), "--selector", "maxinfo", "--length", "3"])
    with pytest.raises(ValueError, match="needs a trained policy"):
        main(["session", "--bank", str(files / "true.csv"), "--selector", "gpm"])
    with pytest.raises(OSError):
        main(["calibrate", str(files / "nope.csv"), "--out", str(files / "b.csv")])
    save_bank_csv(random_bank(5, np.random.default_rng(1)), files / "small.csv")
    with pytest.raises(ValueError, match="responses have 20 items"):
        main(
            [
                "train",
                "--bank",
                str(files / "small.csv"),
                "--responses",
                str(files / "resp.csv"),
                "--out",
                str(files / "p.pt"),
            ]
        )


def test_lazy_package_names_are_the_library_objects():
    """The package exports its names lazily (so --help loads no torch); ``calibrate`` stays the function even once
    the submodule of that name is imported, as it was when the package imported it eagerly."""
    import icml26.gpm
    import icml26.gpm.calibrate
    from icml26.gpm import calibrate, irt

    assert callable(icml26.gpm.calibrate) and calibrate is icml26.gpm.calibrate
    assert icml26.gpm.ItemBank is irt.ItemBank and set(icml26.gpm.__all__) == set(icml26.gpm._LAZY)
