#!/usr/bin/env bash
# One prepared command for a machine with a CUDA GPU (e.g. an H200): builds the real-sized Inkling case
# (T=200058, D=V=201024, H=4096, bf16 lm_head and embed_tokens of 1.6 GB each) in a temp dir, verifies it on
# cuda with 65,536 probe vectors, prints the timings as JSON, runs the GPU-marked tests, and deletes the files.
# Goals (issue 4): predicate + mapping < 50 ms; probe of 65,536 vectors well under a second.
# Usage, from the repository root:  bash bench/gpu_verify.sh [extra bench_verify.py args]
set -euo pipefail
cd "$(dirname "$0")/.."
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
python - <<'EOF'
import sys
import torch
print(f"torch {torch.__version__}, cuda available: {torch.cuda.is_available()}", flush=True)
if not torch.cuda.is_available():
    sys.exit("no CUDA device visible to torch: install a CUDA build of torch first")
print(torch.cuda.get_device_name(0), flush=True)
EOF
python bench/bench_verify.py --device cuda --probe 65536 --naive-probes 64 "$@"
python -m pytest tests/acceptance/test_verify_cli.py -q -m gpu -p no:cacheprovider
