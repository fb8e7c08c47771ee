#!/usr/bin/env python3
"""K small trainings sharing one GPU, as HFTA (MLSys 2021) measured them, and the profile of one
step (CUDA kernels per step, their summed GPU time, the step's wall time).

The jobs are small_models.py's: PointNet-cls after Qi et al., CVPR 2017 (input transform STN3d,
shared MLP 64-128-1024, max pool, MLP 512-256-16, no feature transform), batch 32 of 2,500 points,
Adam (the default, --model pointnet); ResNet-18 for CIFAR-10, batch 128, SGD with momentum
(--model resnet18). Both amp (fp16 autocast, GradScaler), random data already on the GPU (no
data loader: the host cost is the framework's alone).
Each worker prints 'ready' once warmed up and starts timing when the driver writes 'go' to all.

  python3 calibration/bench/pointnet_coloc.py --sharing time_slicing --out pointnet_time_slicing.csv
Needs PyTorch with CUDA; run once more with the MPS control daemon started (--sharing mps).
"""
import argparse
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from small_models import JOBS, job  # noqa: E402


def worker(steps, profile, name):
    import torch
    torch.backends.cudnn.benchmark = True
    model, opt, x, y = job(torch, name)
    scaler = torch.amp.GradScaler("cuda")

    def step():
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.float16):
            loss = torch.nn.functional.nll_loss(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        return loss.item()  # the step's synchronisation, as a training loop's logging does

    for _ in range(10):
        step()
    torch.cuda.synchronize()
    if profile:
        from torch.profiler import ProfilerActivity, profile as prof
        n = 20
        t0 = time.monotonic()
        with prof(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as p:
            for _ in range(n):
                step()
        wall = time.monotonic() - t0
        kernels = [e for e in p.events() if e.device_type.name == "CUDA"]
        t0 = time.monotonic()
        for _ in range(n):
            step()
        plain = (time.monotonic() - t0) / n
        print(json.dumps({"kernels_per_step": len(kernels) / n,
                          "gpu_kernel_ms_per_step": sum(e.device_time for e in kernels) / 1e3 / n,
                          "step_ms_profiled": wall / n * 1e3, "step_ms": plain * 1e3}), flush=True)
        return
    print("ready", flush=True)
    sys.stdin.readline()
    t0 = time.monotonic()
    for _ in range(steps):
        step()
    print(f"{t0} {time.monotonic()}", flush=True)


def drive(args):
    rows, one = [], None
    for k in args.jobs:
        procs = [subprocess.Popen([sys.executable, __file__, "--role", "worker", "--steps", str(args.steps),
                                   "--model", args.model],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True) for _ in range(k)]
        for p in procs:
            if p.stdout.readline().strip() != "ready":
                sys.exit("a worker failed before it was ready")
        for p in procs:
            p.stdin.write("go\n")
            p.stdin.flush()
        spans = [tuple(map(float, p.stdout.readline().split())) for p in procs]
        for p in procs:
            p.wait()
        makespan = max(b for _, b in spans) - min(a for a, _ in spans)
        one = makespan if k == 1 else one
        rows.append(f"{args.sharing},{k},{args.steps},{makespan:.4f},{k * one / makespan:.4f}")
        print(rows[-1], file=sys.stderr, flush=True)
    with open(args.out + ".tmp", "w") as f:
        f.write("sharing,jobs,steps_per_job,makespan_s,speedup\n" + "\n".join(rows) + "\n")
    os.replace(args.out + ".tmp", args.out)


if __name__ == "__main__":
    a = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    a.add_argument("--role", default="driver", choices=["driver", "worker", "profile"])
    a.add_argument("--sharing", default="time_slicing", choices=["time_slicing", "mps"])
    a.add_argument("--jobs", default="1,2,4", type=lambda s: [int(v) for v in s.split(",")])
    a.add_argument("--steps", default=200, type=int)
    a.add_argument("--out", default="pointnet_coloc.csv")
    a.add_argument("--model", default="pointnet", choices=sorted(JOBS))
    args = a.parse_args()
    if args.role == "driver":
        drive(args)
    else:
        worker(args.steps, args.role == "profile", args.model)
