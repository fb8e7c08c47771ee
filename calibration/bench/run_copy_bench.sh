#!/usr/bin/env bash
# Whether ending each step with a copy to the host (a training loop's loss.item()) changes what
# time slicing costs: scalepoint-coloc-bench's host_bound, short_gaps and queued_long loops, K = 1,
# 2, 4, without and with --copy-per-step. Writes OUT/coloc_nocopy.csv, OUT/coloc_copy.csv, log.txt.
set -uo pipefail
out=${1:-${OUT:-copy_out}}
mkdir -p "$out"
b=build-gpu/scalepoint-coloc-bench
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
  "$nvcc" -O2 -std=c++17 -arch=sm_90 -I. -Ibuild-gpu/include calibration/bench/coloc_bench.cu -lcublasLt -ldl \
    -o $b.new >/dev/null 2>&1 && mv $b.new $b || echo "nvcc failed: the carried $b runs"
  common="--cases host_bound,short_gaps,queued_long --jobs 1,2,4 --no-probe --no-power --no-memory"
  timeout 50 $b $common --out "$out/coloc_nocopy.csv"
  timeout 50 $b $common --copy-per-step --out "$out/coloc_copy.csv"
} 2>&1 | tee "$out/log.txt"
