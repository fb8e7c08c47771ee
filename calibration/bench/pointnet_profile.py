#!/usr/bin/env python3
"""One training step of a small job (small_models.py: PointNet by default, or --model resnet18)
kernel by kernel, and B PointNet copies fused into one model as HFTA (MLSys 2021) fuses them: what
the kernel-level compute model and the `fused` strategy of `scalepoint colocate` are checked
against.

  python3 calibration/bench/pointnet_profile.py --out DIR [--model pointnet] [--models 1,2,4,8,16]

Writes into DIR (named after --model):
  pointnet_kernels.csv  every CUDA kernel of --trace-steps steps (torch.profiler's trace): the step,
                        its wall time on the host, the kernel's order, name, start on the
                        device and its launch call on the host (both from the step's start),
                        duration, grid and block (the work units its width in SMs follows
                        from), registers, shared memory, the profiler's achieved occupancy
  pointnet_kernel_summary.csv  the same kernels by name: calls and device time per step
  pointnet_fused.csv    per fused width B (1 = the plain model, then HFTA's fused one at B copies):
                        wall time of a step, kernels and their summed device time per step, peak
                        memory the caching allocator handed out and reserved, and the throughput
                        against one plain job at a time (B x plain step / fused step)
Same job as pointnet_coloc.py (batch 32 of 2,500 points, 16 classes, amp, Adam, data on the GPU);
the fused copies read one input batch, as a hyper-parameter sweep's do (HFTA's examples).
"""
import argparse
import csv
import gc
import json
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from small_models import JOBS, job  # noqa: E402  the plain models, one definition


def build_fused(torch, B, k=16):
    """PointNet-cls, B copies as one model: pointwise convolutions as grouped convolutions over the
    copies' channels, linear layers as batched GEMMs (baddbmm), BatchNorm over all copies' channels
    (per channel, so each copy keeps its own statistics)."""
    nn, F = torch.nn, torch.nn.functional

    def conv(cin, cout):
        return nn.Conv1d(B * cin, B * cout, 1, groups=B)

    class Linear(nn.Module):  # [N, B*cin] -> [N, B*cout], each copy its own weights
        def __init__(self, cin, cout):
            super().__init__()
            self.cin, self.cout = cin, cout
            self.w = nn.Parameter(torch.randn(B, cin, cout) / cin ** 0.5)
            self.b = nn.Parameter(torch.zeros(B, 1, cout))

        def forward(self, x):
            n = x.shape[0]
            y = torch.baddbmm(self.b, x.view(n, B, self.cin).transpose(0, 1), self.w)
            return y.transpose(0, 1).reshape(n, B * self.cout)

    def bn(c):
        return nn.BatchNorm1d(B * c)

    class STN3d(nn.Module):
        def __init__(self):
            super().__init__()
            self.c1, self.c2, self.c3 = conv(3, 64), conv(64, 128), conv(128, 1024)
            self.f1, self.f2, self.f3 = Linear(1024, 512), Linear(512, 256), Linear(256, 9)
            self.b = nn.ModuleList(bn(c) for c in (64, 128, 1024, 512, 256))

        def forward(self, x):
            x = F.relu(self.b[0](self.c1(x)))
            x = F.relu(self.b[1](self.c2(x)))
            x = torch.max(F.relu(self.b[2](self.c3(x))), 2)[0]
            x = F.relu(self.b[4](self.f2(F.relu(self.b[3](self.f1(x))))))
            eye = torch.eye(3, device=x.device, dtype=x.dtype).flatten().repeat(B)
            return (self.f3(x) + eye).view(-1, B, 3, 3)

    class PointNetCls(nn.Module):
        def __init__(self):
            super().__init__()
            self.stn = STN3d()
            self.c1, self.c2, self.c3 = conv(3, 64), conv(64, 128), conv(128, 1024)
            self.b1, self.b2, self.b3 = bn(64), bn(128), bn(1024)
            self.f1, self.f2, self.f3 = Linear(1024, 512), Linear(512, 256), Linear(256, k)
            self.b4, self.b5 = bn(512), bn(256)
            self.drop = nn.Dropout(0.3)

        def forward(self, x):  # x: [N, B*3, P]
            n, p = x.shape[0], x.shape[2]
            t = self.stn(x)
            x = torch.einsum("nbip,nbij->nbjp", x.view(n, B, 3, p), t).reshape(n, B * 3, p)
            x = F.relu(self.b1(self.c1(x)))
            x = F.relu(self.b2(self.c2(x)))
            x = torch.max(self.b3(self.c3(x)), 2)[0]
            x = F.relu(self.b4(self.f1(x)))
            x = F.relu(self.b5(self.drop(self.f2(x))))
            return F.log_softmax(self.f3(x).view(n, B, k), dim=2)  # [N, B, k]

    return PointNetCls


def trainer(torch, B, name="pointnet"):
    """A step function for B fused PointNet copies (0: the plain model `name`)."""
    if B == 0:
        model, opt, x, y = job(torch, name)
    else:  # only what the fused copies need on the device: the peak memory is theirs
        model = build_fused(torch, B)().cuda()
        opt = torch.optim.Adam(model.parameters(), lr=1e-3)
        x = torch.randn(32, 3, 2500, device="cuda").repeat(1, B, 1)
        y = torch.randint(0, 16, (32,), device="cuda")
    scaler = torch.amp.GradScaler("cuda")
    nll = torch.nn.functional.nll_loss

    def step():
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.float16):
            out = model(x)
            # B copies: the sum of their losses, each copy's gradients its own
            loss = nll(out, y) if not B else nll(out.permute(0, 2, 1), y.unsqueeze(1).expand(-1, B)) * B
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        return loss.item()  # the step's synchronisation

    return step


def timed(step, n):
    t0 = time.monotonic()
    for _ in range(n):
        step()
    return (time.monotonic() - t0) / n


def profiled(torch, step, n):
    """Runs n steps under torch.profiler and returns it, each step inside a 'sp_step' range."""
    from torch.profiler import ProfilerActivity, profile, record_function
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as p:
        for _ in range(n):
            with record_function("sp_step"):
                step()
    return p


def kernel_rows(trace_path):
    """The kernels of a Chrome trace, by step: each kernel joined to its launch call by correlation."""
    with open(trace_path) as f:
        events = json.load(f)["traceEvents"]
    steps = sorted((e["ts"], e["ts"] + e["dur"]) for e in events
                   if e.get("ph") == "X" and e.get("name") == "sp_step" and e.get("cat") == "user_annotation")
    launches = {e["args"]["correlation"]: e["ts"] for e in events
                if e.get("cat") in ("cuda_runtime", "cuda_driver") and "correlation" in e.get("args", {})}
    kernels = sorted((e for e in events if e.get("cat") in ("kernel", "gpu_memset", "gpu_memcpy")),
                     key=lambda e: e["ts"])
    rows = []
    for s, (a, b) in enumerate(steps):
        mine = [k for k in kernels if a <= launches.get(k["args"].get("correlation"), -1) <= b]
        if not mine:
            continue
        origin = a  # the host's clock: Kineto puts the device's timestamps on it
        for i, k in enumerate(mine):
            g = k["args"]
            rows.append({"step": s, "step_wall_us": round(b - a, 3), "index": i, "kind": k["cat"], "name": k["name"][:160],
                         "start_us": round(k["ts"] - origin, 3), "duration_us": round(k["dur"], 3),
                         "launch_us": round(launches[g["correlation"]] - origin, 3),
                         "grid": "x".join(map(str, g.get("grid", []))),
                         "block": "x".join(map(str, g.get("block", []))),
                         "registers_per_thread": g.get("registers per thread", ""),
                         "shared_memory_bytes": g.get("shared memory", ""),
                         "est_achieved_occupancy_pct": g.get("est. achieved occupancy %", "")})
    return rows


def traced_kernels(p):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "trace.json")
        p.export_chrome_trace(path)
        return kernel_rows(path)


def write_csv(path, rows):
    if not rows:
        print(f"nothing to write to {path}", flush=True)
        return
    with open(path + ".tmp", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)
    os.replace(path + ".tmp", path)


def main():
    a = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    a.add_argument("--out", required=True)
    a.add_argument("--model", default="pointnet", choices=sorted(JOBS))
    a.add_argument("--models", default="1,2,4,8,16", type=lambda s: [int(v) for v in s.split(",") if v],
                   help="fused widths B (PointNet only; empty: none)")
    a.add_argument("--trace-steps", default=5, type=int)
    a.add_argument("--timed-steps", default=100, type=int)
    a.add_argument("--trace-models", default=0, type=int,
                   help="also write the fused step's kernels at this B (pointnet_fused<B>_kernels.csv)")
    args = a.parse_args()
    if args.model != "pointnet" and args.models:
        a.error("--models fuses PointNet copies only: pass --models '' with --model " + args.model)
    import torch
    torch.backends.cudnn.benchmark = True
    os.makedirs(args.out, exist_ok=True)
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name(0)}", flush=True)

    # Every wall time first: once torch.profiler has run, CUPTI stays attached to the process and
    # each launch costs more (the plain step took 7.8 ms after a profile, 6.4 ms in a fresh worker).
    variants, fused, plain = [0] + args.models, [], None
    for B in variants:
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
        try:
            step = trainer(torch, B, args.model)
            for _ in range(20):
                step()
            wall = timed(step, args.timed_steps)
        except torch.cuda.OutOfMemoryError:
            print(f"B={B}: out of memory", flush=True)
            variants = variants[:len(fused)]
            break
        plain = wall if B == 0 else plain
        fused.append({"variant": "plain" if B == 0 else "fused", "models": max(B, 1),
                      "step_ms": round(wall * 1e3, 4),
                      "max_allocated_mib": round(torch.cuda.max_memory_allocated() / 2**20, 1),
                      "max_reserved_mib": round(torch.cuda.max_memory_reserved() / 2**20, 1),
                      "speedup_over_serial": round(max(B, 1) * plain / wall, 4)})
        print(fused[-1], flush=True)
        del step
        gc.collect()

    for row, B in zip(fused, variants):
        step = trainer(torch, B, args.model)
        for _ in range(20):
            step()
        n = args.trace_steps if B == 0 else 3
        rows = traced_kernels(profiled(torch, step, n))
        row["kernels_per_step"] = len(rows) / n
        row["gpu_kernel_ms_per_step"] = round(sum(r["duration_us"] for r in rows) / n / 1e3, 4)
        print(f"B={B}: {row['kernels_per_step']:.0f} kernels, {row['gpu_kernel_ms_per_step']} ms a step", flush=True)
        if B and B == args.trace_models:
            write_csv(os.path.join(args.out, f"{args.model}_fused{B}_kernels.csv"), rows)
        if B == 0:
            write_csv(os.path.join(args.out, f"{args.model}_kernels.csv"), rows)
            by_name = {}
            for r in rows:
                calls, us = by_name.get(r["name"], (0, 0.0))
                by_name[r["name"]] = (calls + 1, us + r["duration_us"])
            write_csv(os.path.join(args.out, f"{args.model}_kernel_summary.csv"),
                      [{"name": k, "calls_per_step": c / n, "device_us_per_step": round(us / n, 3)}
                       for k, (c, us) in sorted(by_name.items(), key=lambda kv: -kv[1][1])])
        del step
        gc.collect()
    write_csv(os.path.join(args.out, f"{args.model}_fused.csv"), fused)

if __name__ == "__main__":
    main()
