#!/usr/bin/env bash
# ResNet-18 for CIFAR-10 on one GPU, as calibration/data/colocation/<gpu>_resnet18* holds it: the
# step kernel by kernel (pointnet_profile.py --model resnet18), K processes under the default time
# slicing, then under MPS (pointnet_coloc.py --model resnet18), and PointNet's K processes under
# time slicing once more (the spread of its one-job reference). Writes into OUT (default
# ./resnet_out); log.txt has the device, driver, PyTorch and every step's output.
set -uo pipefail
out=${1:-${OUT:-resnet_out}}
mkdir -p "$out"
bench=calibration/bench
{
  nvidia-smi --query-gpu=name,driver_version,power.limit,compute_mode --format=csv,noheader
  py=$(for p in python3 python /usr/bin/python3; do
    $p -c "import torch; assert torch.cuda.is_available()" 2>/dev/null && { echo $p; break; }; done)
  [ -n "$py" ] || { echo "no python with CUDA torch"; exit 1; }
  timeout 120 $py $bench/pointnet_profile.py --model resnet18 --models "" --out "$out"
  timeout 90 $py $bench/pointnet_coloc.py --model resnet18 --sharing time_slicing --steps 60 \
    --out "$out/resnet18_time_slicing.csv"
  timeout 90 $py $bench/pointnet_coloc.py --sharing time_slicing --steps 100 --out "$out/pointnet_time_slicing.csv"
  export CUDA_MPS_PIPE_DIRECTORY=/tmp/sp-mps/pipe CUDA_MPS_LOG_DIRECTORY=/tmp/sp-mps/log
  mkdir -p $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY
  if nvidia-cuda-mps-control -d; then
    sleep 1
    timeout 90 $py $bench/pointnet_coloc.py --model resnet18 --sharing mps --steps 60 --out "$out/resnet18_mps.csv"
    echo quit | nvidia-cuda-mps-control
  fi
} 2>&1 | tee "$out/log.txt"
