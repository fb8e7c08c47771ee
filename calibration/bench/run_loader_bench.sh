#!/usr/bin/env bash
# HFTA's PointNet job with its data loader (loader_coloc.py: synthetic shapes in ShapeNet part's
# text format, 4 loader workers, Linear layers and the feature transform), K = 1, 2, 4 processes
# under the default time slicing and under MPS; the same model without a loader (one batch on the
# GPU); and the loader runs again on 8 of the node's CPUs (taskset), HFTA's V100 host had 8 vCPU,
# its A100 host 12. Writes OUT/loader_<sharing>_<cpus>.csv, the nvidia-smi dmon logs beside them
# and log.txt (device, driver, PyTorch, every line printed). About 4-5 minutes on an H100 node, at
# most 6 x 75 s: each run keeps the rows of the K it finished.
# Needs PyTorch with CUDA and numpy.
# Written down before any run (scalepoint at the commit that adds this script; an H100 node, 16
# cores, the loader's wall time assumed 50 ms a step; to be re-derived from the K = 1 run): with
# the loader on 16 CPUs, time slicing x1.92 / x2.91 and MPS x1.94 / x3.01 at K = 2 / 4; on 8 CPUs
# x1.56-1.58 for both; without the loader time slicing x1.59 / x2.02, MPS x1.71 / x2.33. HFTA's
# published pattern would instead show time slicing near x1.0 with the loader and MPS near x2.
set -uo pipefail
out=${1:-${OUT:-loader_out}}
mkdir -p "$out"
bench=calibration/bench
{
  nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm,compute_mode,persistence_mode --format=csv
  echo "host cores: $(nproc)"; lscpu | grep -E "Model name|Thread|Core|Socket" || true
  py=$(for p in python3 python /usr/bin/python3; do
    $p -c "import torch, numpy; assert torch.cuda.is_available()" 2>/dev/null && { echo $p; break; }; done)
  [ -n "$py" ] || { echo "no python with CUDA torch and numpy"; exit 1; }
  $py -c "import torch, numpy; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'numpy', numpy.__version__)"
  $py $bench/loader_coloc.py --make-data "$out/shapes" --shapes 1000
  run() {  # sharing, cpus label, extra arguments
    local sharing=$1 cpus=$2; shift 2
    local pin=""; [ "$cpus" = all ] || pin="taskset -c 0-$((cpus - 1))"
    timeout 75 $pin $py $bench/loader_coloc.py --data "$out/shapes" --sharing "$sharing" --dmon "$@"
  }
  both() {  # the four runs of one sharing
    run "$1" all --out "$out/loader_$1_all.csv"
    run "$1" all --no-loader --out "$out/no_loader_$1_all.csv"
    run "$1" 8 --out "$out/loader_$1_8.csv"
  }
  both time_slicing
  export CUDA_MPS_PIPE_DIRECTORY=/tmp/sp-mps/pipe CUDA_MPS_LOG_DIRECTORY=/tmp/sp-mps/log
  mkdir -p $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY
  if nvidia-cuda-mps-control -d; then
    sleep 1
    both mps
    echo quit | nvidia-cuda-mps-control
  fi
  rm -rf "$out/shapes"
} 2>&1 | tee "$out/log.txt"
