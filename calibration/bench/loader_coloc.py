#!/usr/bin/env python3
"""K loader-bound small trainings sharing one GPU: HFTA's PointNet benchmark as its harness runs it
(UofT-EcoSystem/hfta benchmarks/pointnet.py: train_classification.py --feature_transform, batch 32,
4 DataLoader workers that parse each shape's two text files with np.loadtxt (before numpy 1.23 a
Python loop over the lines: --parser python, the default), a fresh set of
workers every epoch, the loss printed every step, amp), on synthetic shapes in ShapeNet part's
file format, so that the host work per step is a real loader's, not a sleep.

What it is for: HFTA published time slicing at ~1.0x one job at a time where MPS reaches 2-2.5x on
the same 12-vCPU host, and MPS at ~1.05x on an 8-vCPU one; scalepoint's model gives 2.2x and 1.5x
(README "Co-location"). Each run records the makespan, every process's CPU time (its own and its
loader workers') and, where nvidia-smi is there, `nvidia-smi dmon` while the K jobs run.

  python3 loader_coloc.py --make-data shapes --shapes 1000
  python3 loader_coloc.py --data shapes --sharing time_slicing --out loader_ts.csv
  (MPS daemon started) python3 loader_coloc.py --data shapes --sharing mps --out loader_mps.csv
  --no-loader: the same model on one batch kept on the GPU (the job without its host work).
"""
import argparse
import os
import resource
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from small_models import build_pointnet_points  # noqa: E402

POINTS, BATCH, CLASSES, WORKERS = 2500, 32, 16, 4


def make_data(root, shapes, seed=1):
    """`shapes` shapes of 2,000-3,000 points: points/<i>.pts (x y z a line), labels/<i>.seg (a part
    label a line), the layout and number formats of ShapeNet part's files; class i % 16."""
    import random
    rnd = random.Random(seed)
    for sub in ("points", "labels"):
        os.makedirs(os.path.join(root, sub), exist_ok=True)
    for i in range(shapes):
        n = rnd.randint(2000, 3000)
        with open(os.path.join(root, "points", f"{i}.pts"), "w") as f:
            f.writelines(f"{rnd.uniform(-1, 1):.5f} {rnd.uniform(-1, 1):.5f} {rnd.uniform(-1, 1):.5f}\n" for _ in range(n))
        with open(os.path.join(root, "labels", f"{i}.seg"), "w") as f:
            f.writelines(f"{rnd.randint(1, 4)}\n" for _ in range(n))


def read_columns(path, parser, np):
    """A text file of whitespace-separated numbers as a 2-D array. `python`: line by line in
    Python, as np.loadtxt was implemented before numpy 1.23 (its release notes: loadtxt rewritten
    in C, many times faster), which is what HFTA's 2021 stack ran; `numpy`: today's np.loadtxt."""
    if parser == "numpy":
        return np.loadtxt(path)
    with open(path) as f:
        return np.array([[float(v) for v in line.split()] for line in f if line.strip()])


class Shapes:
    """A map-style dataset of make_data's shapes (module level, so that loader workers started
    by any method can unpickle it): each item the shape resampled to `points`, centred, scaled
    into the unit ball, turned about the vertical axis and jittered, and its class."""

    def __init__(self, root, points, parser, reparse):
        self.root, self.points, self.parser, self.reparse = root, points, parser, reparse
        self.n = len(os.listdir(os.path.join(root, "points")))

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        import numpy as np
        import torch
        path = os.path.join(self.root, "points", f"{i}.pts")
        for _ in range(self.reparse - 1):  # the old parser's cost (--reparse)
            read_columns(path, self.parser, np)
        pts = read_columns(path, self.parser, np).astype(np.float32)
        seg = read_columns(os.path.join(self.root, "labels", f"{i}.seg"), self.parser, np).astype(np.int64).ravel()
        pts = pts[np.random.choice(len(seg), self.points, replace=True)]
        pts -= pts.mean(axis=0)
        pts /= np.sqrt((pts ** 2).sum(axis=1)).max()
        a = np.random.uniform(0, 2 * np.pi)
        turn = np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]], dtype=np.float32)
        pts[:, [0, 2]] = pts[:, [0, 2]] @ turn
        pts += np.random.normal(0, 0.02, size=pts.shape).astype(np.float32)
        return torch.from_numpy(pts), torch.tensor(i % CLASSES)


def cpu_seconds():
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, kids.ru_utime + kids.ru_stime


def worker(args):
    import torch
    dev = torch.device(args.device)
    cuda = dev.type == "cuda"
    torch.backends.cudnn.benchmark = True
    model = build_pointnet_points(torch, CLASSES)().to(dev)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    scaler = (torch.amp.GradScaler("cuda", enabled=cuda) if hasattr(torch.amp, "GradScaler")
              else torch.cuda.amp.GradScaler(enabled=cuda))
    F = torch.nn.functional
    sink = sys.stderr if args.verbose else open(os.devnull, "w")

    def step(x, y):
        opt.zero_grad(set_to_none=True)
        with torch.autocast(dev.type, dtype=torch.float16 if cuda else torch.bfloat16, enabled=cuda):
            loss = F.nll_loss(model(x), y) + 0.001 * model.penalty
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        print(f"loss {loss.item():.4f}", file=sink)  # HFTA's loop prints the loss every step

    if args.no_loader:
        x, y = torch.randn(BATCH, args.points, 3, device=dev), torch.randint(0, CLASSES, (BATCH,), device=dev)
        epoch_steps = args.steps_per_epoch
        epochs = lambda: ((x, y) for _ in range(epoch_steps))  # noqa: E731
    else:
        data = Shapes(args.data, args.points, args.parser, args.reparse)
        # a new DataLoader iterator an epoch: its workers start again, as without persistent_workers;
        # forked, as Linux's default was for HFTA's 2021 stack
        loader = torch.utils.data.DataLoader(data, batch_size=BATCH, shuffle=True, num_workers=WORKERS, drop_last=True,
                                             multiprocessing_context="fork")
        epochs = lambda: ((p.to(dev), c.to(dev)) for p, c in loader)  # noqa: E731
    for x, y in epochs():  # warm-up epoch (cuDNN autotuning, allocator)
        step(x, y)
    if cuda:
        torch.cuda.synchronize()
    print("ready", flush=True)
    sys.stdin.readline()
    cpu0, t0, steps = cpu_seconds(), time.monotonic(), 0
    for _ in range(args.epochs):
        for x, y in epochs():
            step(x, y)
            steps += 1
    t1, cpu1 = time.monotonic(), cpu_seconds()
    print(f"{t0} {t1} {steps} {cpu1[0] - cpu0[0]} {cpu1[1] - cpu0[1]}", flush=True)


def write(path, head, rows):
    with open(path + ".tmp", "w") as f:
        f.write(head + "".join(r + "\n" for r in rows))
    os.replace(path + ".tmp", path)


def drive(args):
    if args.jobs[0] != 1:
        sys.exit("--jobs must start with 1: the speedups are over one job alone")
    head = ("sharing,mode,parser,reparse,jobs,host_cpus,steps_per_job,makespan_s,speedup,main_cpu_ms_per_step,"
            "loader_cpu_ms_per_step\n")
    rows, one = [], None
    cpus = len(os.sched_getaffinity(0))
    mode = "no_loader" if args.no_loader else "loader"
    for k in args.jobs:
        cmd = [sys.executable, os.path.abspath(__file__), "--role", "worker", "--epochs", str(args.epochs),
               "--device", args.device, "--steps-per-epoch", str(args.steps_per_epoch), "--points", str(args.points),
               "--parser", args.parser, "--reparse", str(args.reparse)]
        cmd += ["--no-loader"] if args.no_loader else ["--data", args.data]
        procs = [subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True) for _ in range(k)]

        def stop(why):
            for p in procs:
                p.kill()
            sys.exit(why)

        for p in procs:
            if p.stdout.readline().strip() != "ready":
                stop(f"a worker failed before it was ready (K = {k})")
        dmon = None
        if args.dmon and shutil.which("nvidia-smi"):
            log = open(f"{args.out}.{args.sharing}.{mode}.k{k}.dmon", "w")
            dmon = subprocess.Popen(["nvidia-smi", "dmon", "-s", "u", "-d", "1"], stdout=log, stderr=subprocess.DEVNULL)
        for p in procs:
            p.stdin.write("go\n")
            p.stdin.flush()
        spans = [p.stdout.readline().split() for p in procs]
        if dmon:
            dmon.terminate()
        if any(len(s) != 5 for s in spans):
            stop(f"a worker failed during the timed steps (K = {k})")
        for p in procs:
            p.wait()
        start, stop = min(float(s[0]) for s in spans), max(float(s[1]) for s in spans)
        steps = sum(int(s[2]) for s in spans) / k
        main_cpu = sum(float(s[3]) for s in spans) / k / steps
        loader_cpu = sum(float(s[4]) for s in spans) / k / steps
        makespan = stop - start
        one = makespan if k == 1 else one
        rows.append(f"{args.sharing},{mode},{args.parser},{args.reparse},{k},{cpus},{steps:.0f},{makespan:.4f},{k * one / makespan:.4f},"
                    f"{main_cpu * 1e3:.2f},{loader_cpu * 1e3:.2f}")
        print(rows[-1], file=sys.stderr, flush=True)
        write(args.out, head, rows)  # after each K: a run cut short keeps what it measured


if __name__ == "__main__":
    a = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    a.add_argument("--role", default="driver", choices=["driver", "worker"])
    a.add_argument("--make-data", metavar="DIR", help="write synthetic shapes into DIR and stop")
    a.add_argument("--shapes", default=1000, type=int, help="with --make-data: how many")
    a.add_argument("--data", default="shapes", help="the shapes' folder")
    a.add_argument("--sharing", default="time_slicing", choices=["time_slicing", "mps"], help="a label for the output")
    a.add_argument("--jobs", default="1,2,4", type=lambda s: [int(v) for v in s.split(",")])
    a.add_argument("--epochs", default=2, type=int, help="timed epochs after one of warm-up")
    a.add_argument("--no-loader", action="store_true", help="one batch kept on the device, no data loading")
    a.add_argument("--steps-per-epoch", default=31, type=int, help="with --no-loader")
    a.add_argument("--device", default="cuda", help="cpu: a smoke test of the script (with few --points)")
    a.add_argument("--points", default=POINTS, type=int, help="points a shape is resampled to")
    a.add_argument("--parser", default="python", choices=["python", "numpy"], help="how a shape's text is read")
    a.add_argument("--reparse", default=4, type=int,
                   help="parse each .pts this many times: brings a batch's loader CPU near the ~0.5 s that HFTA's "
                        "step implies (131 ms of host time a step over 4 workers, models/small/pointnet_cls_hfta.yaml)")
    a.add_argument("--dmon", action="store_true", help="record nvidia-smi dmon while the K jobs run")
    a.add_argument("--verbose", action="store_true", help="print every step's loss")
    a.add_argument("--out", default="loader_coloc.csv")
    args = a.parse_args()
    if args.make_data:
        make_data(args.make_data, args.shapes)
    elif args.role == "driver":
        drive(args)
    else:
        worker(args)
