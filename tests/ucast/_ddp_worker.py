"""Run by torchrun in test_train.py: 2 DDP steps on CPU (gloo); each rank saves its final weights."""

import sys

import numpy as np
import torch

from icml26.ucast.config import ModelConfig, TrainConfig
from icml26.ucast.model import UCast

torch.set_num_threads(1)


def main(out_dir: str, stage: str) -> None:
    from icml26.ucast.train import train_stage

    rng = np.random.default_rng(0)
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
    z = rng.normal(size=(2, 5, 2, 8, 8)).astype(np.float32)
    cfg = TrainConfig(stage=stage, steps=2, batch_size=4, warmup=1, log_every=1)
    train_stage(model, z, cfg, checkpoint=f"{out_dir}/ckpt.pt")
    rank = torch.distributed.get_rank()
    torch.save({k: v for k, v in model.state_dict().items()}, f"{out_dir}/rank{rank}.pt")
    torch.distributed.destroy_process_group()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
