#!/usr/bin/env python3
"""K PointNet-classification trainings sharing one GPU, as HFTA (MLSys 2021) measured them, and the
profile of one step (CUDA kernels per step, their summed GPU time, the step's wall time).

PointNet-cls after Qi et al., CVPR 2017 (input transform STN3d, shared MLP 64-128-1024, max pool,
MLP 512-256-16, no feature transform), batch 32 of 2,500 points, amp (fp16 autocast, GradScaler),
Adam, random data already on the GPU (no data loader: the host cost is the framework's alone).
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


def build(torch):
    nn, F = torch.nn, torch.nn.functional

    class STN3d(nn.Module):
        def __init__(self):
            super().__init__()
            self.c1, self.c2, self.c3 = nn.Conv1d(3, 64, 1), nn.Conv1d(64, 128, 1), nn.Conv1d(128, 1024, 1)
            self.f1, self.f2, self.f3 = nn.Linear(1024, 512), nn.Linear(512, 256), nn.Linear(256, 9)
            self.b = nn.ModuleList(nn.BatchNorm1d(c) for c in (64, 128, 1024, 512, 256))

        def forward(self, x):
            x = F.relu(self.b[0](self.c1(x)))
            x = F.relu(self.b[1](self.c2(x)))
            x = torch.max(F.relu(self.b[2](self.c3(x))), 2)[0]
            x = F.relu(self.b[4](self.f2(F.relu(self.b[3](self.f1(x))))))
            eye = torch.eye(3, device=x.device, dtype=x.dtype).flatten()
            return (self.f3(x) + eye).view(-1, 3, 3)

    class PointNetCls(nn.Module):
        def __init__(self, k=16):
            super().__init__()
            self.stn = STN3d()
            self.c1, self.c2, self.c3 = nn.Conv1d(3, 64, 1), nn.Conv1d(64, 128, 1), nn.Conv1d(128, 1024, 1)
            self.b1, self.b2, self.b3 = nn.BatchNorm1d(64), nn.BatchNorm1d(128), nn.BatchNorm1d(1024)
            self.f1, self.f2, self.f3 = nn.Linear(1024, 512), nn.Linear(512, 256), nn.Linear(256, k)
            self.b4, self.b5 = nn.BatchNorm1d(512), nn.BatchNorm1d(256)
            self.drop = nn.Dropout(0.3)

        def forward(self, x):
            t = self.stn(x)
            x = torch.bmm(x.transpose(2, 1), t).transpose(2, 1)
            x = F.relu(self.b1(self.c1(x)))
            x = F.relu(self.b2(self.c2(x)))
            x = torch.max(self.b3(self.c3(x)), 2)[0]
            x = F.relu(self.b4(self.f1(x)))
            x = F.relu(self.b5(self.drop(self.f2(x))))
            return F.log_softmax(self.f3(x), dim=1)

    return PointNetCls


def worker(steps, profile):
    import torch
    torch.backends.cudnn.benchmark = True
    model = build(torch)().cuda()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    scaler = torch.amp.GradScaler("cuda")
    x = torch.randn(32, 3, 2500, device="cuda")
    y = torch.randint(0, 16, (32,), device="cuda")

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
        procs = [subprocess.Popen([sys.executable, __file__, "--role", "worker", "--steps", str(args.steps)],
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
    args = a.parse_args()
    if args.role == "driver":
        drive(args)
    else:
        worker(args.steps, args.role == "profile")
