#!/usr/bin/env bash
# Builds scalepoint-coloc-bench with nvcc alone and runs it twice on GPU 0: under the default time
# slicing, then with the MPS control daemon started (co-location rows only). Writes into OUT
# (default ./coloc_out): coloc_time_slicing.csv, coloc_mps.csv, nvidia-smi.txt, build.log.
# CLI11's headers are looked for in build-gpu/include (a copy of /usr/include/CLI) or /usr/include.
set -uo pipefail
out=${1:-${OUT:-coloc_out}}
mkdir -p "$out"
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
bin=build-gpu/scalepoint-coloc-bench
mkdir -p build-gpu
"$nvcc" -O2 -std=c++17 -arch=sm_90 -I. -Ibuild-gpu/include calibration/bench/coloc_bench.cu -lcublasLt -ldl \
  -o "$bin" >"$out/build.log" 2>&1 || { echo "build failed"; tail -20 "$out/build.log"; exit 1; }
nvidia-smi -q >"$out/nvidia-smi.txt" 2>&1
nvidia-smi --query-gpu=name,power.limit,power.default_limit,clocks.max.sm,compute_mode,persistence_mode \
  --format=csv >>"$out/nvidia-smi.txt" 2>&1
"$bin" --out "$out/coloc_time_slicing.csv" 2>&1 | tee "$out/time_slicing.log"
export CUDA_MPS_PIPE_DIRECTORY=/tmp/sp-mps/pipe CUDA_MPS_LOG_DIRECTORY=/tmp/sp-mps/log
mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
if nvidia-cuda-mps-control -d; then
  sleep 1
  "$bin" --sharing mps --no-power --out "$out/coloc_mps.csv" 2>&1 | tee "$out/mps.log"
  echo quit | nvidia-cuda-mps-control
  cp -r "$CUDA_MPS_LOG_DIRECTORY" "$out/mps_log" 2>/dev/null
else
  echo "the MPS control daemon did not start" | tee "$out/mps.log"
fi
