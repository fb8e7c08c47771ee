#!/usr/bin/env bash
# Whether a context's memory footprint changes what time slicing costs: scalepoint-coloc-bench's
# host_bound, short_gaps and queued_long loops with bare workers, then with each worker holding
# 8 GiB it has written (--hold-mib 8192); plus HFTA's fused PointNet at B = 4 kernel by kernel
# (pointnet_profile.py --trace-models 4) and K = 1, 2 PointNet processes under time slicing again.
# Writes into OUT (default ./hold_out); log.txt has the device and every step's output.
set -uo pipefail
out=${1:-${OUT:-hold_out}}
mkdir -p "$out"
bench=calibration/bench
b=build-gpu/scalepoint-coloc-bench
{
  nvidia-smi --query-gpu=name,driver_version,power.limit,compute_mode --format=csv,noheader
  nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
  "$nvcc" -O2 -std=c++17 -arch=sm_90 -I. -Ibuild-gpu/include $bench/coloc_bench.cu -lcublasLt -ldl -o $b.new \
    >/dev/null 2>&1 && mv $b.new $b || echo "nvcc failed: the carried $b runs"
  for hold in 0 8192; do
    timeout 80 $b --cases host_bound,short_gaps,queued_long --jobs 1,2,4 --no-probe --no-power --no-memory \
      --hold-mib $hold --out "$out/coloc_hold$hold.csv"
  done
  py=$(for p in python3 python /usr/bin/python3; do
    $p -c "import torch; assert torch.cuda.is_available()" 2>/dev/null && { echo $p; break; }; done)
  [ -n "$py" ] || { echo "no python with CUDA torch"; exit 1; }
  timeout 120 $py $bench/pointnet_profile.py --out "$out" --models 2,4 --trace-models 4 --timed-steps 50
  timeout 60 $py $bench/pointnet_coloc.py --sharing time_slicing --jobs 1,2 --steps 100 --out "$out/pointnet_time_slicing.csv"
} 2>&1 | tee "$out/log.txt"
