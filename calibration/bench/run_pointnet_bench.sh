#!/usr/bin/env bash
# PointNet on one GPU, as calibration/data/colocation/<gpu>_pointnet* holds it: the step kernel by
# kernel and HFTA's fusion at B copies (pointnet_profile.py), K processes under the default time
# slicing (pointnet_coloc.py), scalepoint-coloc-bench's short-gap loops beside host_bound, then K
# processes under MPS. Writes into OUT (default ./pointnet_out); log.txt has the device, driver,
# PyTorch and every step's output. Needs PyTorch with CUDA, nvcc, and CLI11's headers in
# build-gpu/include or /usr/include (else a carried build-gpu/scalepoint-coloc-bench is used).
set -uo pipefail
out=${1:-${OUT:-pointnet_out}}
mkdir -p "$out"
bench=calibration/bench
{
  nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm,compute_mode,persistence_mode --format=csv
  echo "host cores: $(nproc)"
  py=$(for p in python3 python /usr/bin/python3; do
    $p -c "import torch; assert torch.cuda.is_available()" 2>/dev/null && { echo $p; break; }; done)
  [ -n "$py" ] || { echo "no python with CUDA torch"; exit 1; }
  $py -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda)"
  timeout 200 $py $bench/pointnet_profile.py --out "$out"
  timeout 90 $py $bench/pointnet_coloc.py --sharing time_slicing --steps 100 --out "$out/pointnet_time_slicing.csv"
  nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
  b=build-gpu/scalepoint-coloc-bench
  "$nvcc" -O2 -std=c++17 -arch=sm_90 -I. -Ibuild-gpu/include $bench/coloc_bench.cu -lcublasLt -ldl -o $b.new \
    >/dev/null 2>&1 && mv $b.new $b || echo "nvcc failed: the carried $b runs"
  timeout 60 $b --cases host_bound,short_gaps,tiny_gaps --jobs 1,2,4 --no-probe --no-power --no-memory \
    --out "$out/coloc_gaps.csv"
  export CUDA_MPS_PIPE_DIRECTORY=/tmp/sp-mps/pipe CUDA_MPS_LOG_DIRECTORY=/tmp/sp-mps/log
  mkdir -p $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY
  if nvidia-cuda-mps-control -d; then
    sleep 1
    timeout 90 $py $bench/pointnet_coloc.py --sharing mps --steps 100 --out "$out/pointnet_mps.csv"
    echo quit | nvidia-cuda-mps-control
  fi
} 2>&1 | tee "$out/log.txt"
