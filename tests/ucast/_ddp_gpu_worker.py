"""Run by torchrun (1 process) in test_train.py's gpu test: train 2 steps on CUDA, report where they ran."""

import json
import sys

import numpy as np
import torch
import xarray as xr

from icml26.ucast.config import ModelConfig, TrainConfig
from icml26.ucast.model import UCast


def main(out_dir: str, data_path: str) -> None:
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
    with xr.open_dataset(data_path) as ds:
        data = WindowDataset.from_xarray(ds, ["a", "b"], model)
        cfg = TrainConfig(stage="det", steps=2, batch_size=4, warmup=1, log_every=1)
        train_stage(model, data, cfg, device="cuda", checkpoint=f"{out_dir}/ckpt.pt")
    step = torch.load(f"{out_dir}/ckpt.pt", weights_only=True)["step"]
    with open(f"{out_dir}/gpu.json", "w") as fh:
        json.dump(
            {"device": str(next(model.parameters()).device), "current": torch.cuda.current_device(), "step": step}, fh
        )
    if torch.distributed.is_initialized():
        torch.distributed.destroy_process_group()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
