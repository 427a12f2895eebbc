"""Run by torchrun in test_train.py: DDP steps on CPU (gloo) from a lazily read NetCDF file.

Each rank records the windows it read and saves its final weights; rank 0 alone writes the checkpoint.
"""

import json
import sys

import numpy as np
import torch
import xarray as xr

from icml26.ucast.config import ModelConfig, TrainConfig
from icml26.ucast.model import UCast

torch.set_num_threads(1)


def main(out_dir: str, data_path: str, stage: str) -> None:
    from icml26.ucast.train import WindowDataset, train_stage

    ones = np.ones(2, np.float32)
    model = UCast(
        ModelConfig(channels=(4, 8)),
        2,
        0 * ones,
        ones,
        ones,
        np.zeros((1, 8, 8)),
        np.linspace(-80, 80, 8),
        np.arange(8) * 45.0,
    )
    with xr.open_dataset(data_path) as ds:  # lazy: each window is read when the DataLoader asks for it
        data = WindowDataset.from_xarray(ds, ["a", "b"], model)
        read, seen = data._read, []

        def logged(b, t):
            seen.append([b, t])
            return read(b, t)

        data._read = logged
        cfg = TrainConfig(stage=stage, steps=3, batch_size=4, warmup=1, log_every=1)
        train_stage(model, data, cfg, checkpoint=f"{out_dir}/ckpt.pt", stop_at=2)
    rank = torch.distributed.get_rank()
    torch.save(dict(model.state_dict()), f"{out_dir}/rank{rank}.pt")
    with open(f"{out_dir}/read{rank}.json", "w") as fh:
        json.dump({"windows": seen, "device": str(next(model.parameters()).device)}, fh)
    torch.distributed.destroy_process_group()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3])
