"""Collect (resumably) SmolLM2's trials on the v5 vocabulary's 1,050 new nouns, for the planned
``lm-fc-beats-fa-v5`` (src/icml26/behaviorgeo/README.md, "Next session"): forced choice (4 calibrated trials a
cue), then free association (16 runs a cue at T 0.7 / top-p 0.9), then float32 hidden states, with the judged
stores' settings, into the user cache (``lmexp.extension_stores``). Interrupt it at any time; rerun to resume.

    python benchmarks/behaviorgeo_v5_collect.py                 # all stages, in order
    python benchmarks/behaviorgeo_v5_collect.py --stage fa      # one stage
"""

from __future__ import annotations

import argparse
import json
import time

from icml26.behaviorgeo.lmexp import collect_extension

if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stage", choices=("fc", "fa", "hidden", "all"), default="all")
    parser.add_argument("--max-trials", type=int, default=None, help="stop each stage after this many (smoke)")
    args = parser.parse_args()
    for stage in ("fc", "fa", "hidden") if args.stage == "all" else (args.stage,):
        out = collect_extension(stage, max_trials=args.max_trials, progress=True)
        print(time.strftime("%H:%M:%S"), json.dumps(out, default=str), flush=True)
