#!/usr/bin/env python3
"""Read the phases of phases_v4.1.csv from MLPerf Training v4.1 result logs (the README's rules).

Usage (from the repository root, with a clone of mlcommons/training_results_v4.1):
  python3 calibration/data/mlperf/read_phases.py GIT_DIR BENCHMARK ORG SYSTEM_FOLDER RESULT_FILE...
GIT_DIR is the clone's git directory; the logs are read at its HEAD with `git show`, so the
commit printed in the source column is the one read (MIRROR in the environment names the clone's
origin, default mlcommons/training_results_v4.1). Prints CSV rows (no header) in the columns
of phases_v4.1.csv. Only the standard library: the rules below are the whole method.

  llama2_70b_lora  training_step: block_start to block_stop (both with samples_count) over the
                   samples trained / GBS, the first interval (warm-up) left out; evaluation: the
                   mean eval_start to eval_stop, every evaluation; evaluation_setup: run_start to
                   the first block_stop less its steps at the steady step.
  bert             training_step: eval_stop to the next eval_start over the samples trained
                   (the eval_start value), the first interval left out; evaluation: the mean
                   eval_start to eval_stop.
  retinanet        training_step: the full epochs' epoch_start to epoch_stop over 1,170,301 / GBS
                   steps (not the last, which run_stop cuts short); evaluation: eval_start to the next epoch_start (scoring runs on in the
                   background); after_last_evaluation: the last epoch_start to run_stop.
  stable_diffusion training_step: consecutive block_stops over the steps between them
                   (samples_count / GBS), the first block left out and those holding a checkpoint
                   (a multiple of 512,000 images); the count column is the blocks kept.
"""
import json
import os
import statistics
import subprocess
import sys

RETINANET_TRAIN_IMAGES = 1170301
CHECKPOINT = 512000  # Stable Diffusion: images between the checkpoints the offline evaluation scores


def git(git_dir, *args):
    """git's output, or exit naming what failed (a wrong clone path, a log not at its HEAD)."""
    done = subprocess.run(["git", "--git-dir", git_dir, *args], capture_output=True, text=True, errors="replace")
    if done.returncode != 0:
        why = done.stderr.strip().splitlines()
        sys.exit(f"git --git-dir {git_dir} {' '.join(args)}: {why[-1] if why else 'failed'}")
    return done.stdout


def events(git_dir, path):
    text = git(git_dir, "show", "HEAD:" + path)
    out = []
    for line in text.splitlines():
        at = line.find(":::MLLOG ")
        if at < 0:
            continue
        # Multi-rank logs prefix a rank ("0: "); read rank 0 only.
        prefix = line[:at].strip().rstrip(":")
        if prefix and prefix != "0":
            continue
        try:
            out.append(json.loads(line[at + len(":::MLLOG "):]))
        except json.JSONDecodeError:
            continue
    return out


class LogError(Exception):
    """A log that lacks what a phase needs: named, with the log, instead of a traceback."""


def first(evs, key):
    e = next((e for e in evs if e["key"] == key), None)
    if e is None:
        raise LogError(f"no {key}")
    return e


def samples(e):
    if "samples_count" not in e.get("metadata", {}):
        raise LogError(f"{e['key']} at {e['time_ms']} ms has no samples_count")
    return e["metadata"]["samples_count"]


def lora(evs, gbs):
    run_start = first(evs, "run_start")["time_ms"]
    start, blocks, evals = None, [], []
    eval_start = None
    for e in evs:
        k = e["key"]
        if k == "block_start":
            start = (e["time_ms"], samples(e))
        elif k == "block_stop" and start is not None:
            blocks.append((e["time_ms"] - start[0], samples(e) - start[1], e["time_ms"]))
            start = None
        elif k == "eval_start":
            eval_start = e["time_ms"]
        elif k == "eval_stop" and eval_start is not None:
            evals.append(e["time_ms"] - eval_start)
            eval_start = None
    if len(blocks) < 2 or not evals:
        raise LogError("fewer than two training blocks or no evaluation")
    later = blocks[1:]
    step = sum(b[0] for b in later) / 1e3 / (sum(b[1] for b in later) / gbs)
    first_block = blocks[0]
    setup = (first_block[2] - run_start) / 1e3 - step * first_block[1] / gbs
    n = len(evals)
    return [("evaluation", f"{statistics.mean(evals) / 1e3:.2f}", n),
            ("training_step", f"{step:.3f}", n), ("evaluation_setup", f"{setup:.2f}", n)]


def bert(evs, gbs):
    intervals, evals, start, stop = [], [], None, None
    for e in evs:
        if e["key"] == "eval_start":
            if stop is not None:
                intervals.append((e["time_ms"] - stop[0], e["value"] - stop[1]))
            start = e["time_ms"]
        elif e["key"] == "eval_stop" and start is not None:
            evals.append(e["time_ms"] - start)
            stop = (e["time_ms"], e["value"])
            start = None
    if not intervals:
        # Older containers (NGC 23.04: Eos' one node, Clemson) log eval_accuracy only, so the
        # training between evaluations cannot be told from the evaluations.
        raise LogError("no eval_start/eval_stop pairs: the step cannot be separated from the evaluations")
    step = sum(i[0] for i in intervals) / 1e3 / (sum(i[1] for i in intervals) / gbs)
    n = len(evals)
    return [("evaluation", f"{statistics.mean(evals) / 1e3:.4g}", n), ("training_step", f"{step:.6f}", n)]


def retinanet(evs, gbs):
    epochs, evals, run_stop = [], [], first(evs, "run_stop")["time_ms"]
    epoch_start, eval_start, last_epoch_start = {}, None, None
    for e in evs:
        k = e["key"]
        if k == "epoch_start":
            epoch_start[e["value"]] = e["time_ms"]
            last_epoch_start = e["time_ms"]
            if eval_start is not None:
                evals.append(e["time_ms"] - eval_start)
                eval_start = None
        elif k == "epoch_stop" and e["value"] in epoch_start and e["time_ms"] < run_stop:
            epochs.append(e["time_ms"] - epoch_start[e["value"]])  # not the one run_stop cuts short
        elif k == "eval_start":
            eval_start = e["time_ms"]
    if not epochs or not evals:
        raise LogError("no full epoch or no evaluation")
    step = statistics.mean(epochs) / 1e3 / (RETINANET_TRAIN_IMAGES / gbs)
    n = len(evals)
    return [("evaluation", f"{statistics.mean(evals) / 1e3:.3f}", n),
            ("training_step", f"{step:.6f}", n),
            ("after_last_evaluation", f"{(run_stop - last_epoch_start) / 1e3:.3f}", n)]


def stable_diffusion(evs, gbs):
    stops = [(e["time_ms"], samples(e)) for e in evs if e["key"] == "block_stop"]
    # A checkpoint is written for the offline evaluation every 512,000 images, in the block that
    # crosses the multiple (its steps run 4-50 % longer).
    def holds_checkpoint(a, b):  # the first multiple at or after the block's start, before its end
        return max(CHECKPOINT, -(-a // CHECKPOINT) * CHECKPOINT) < b

    kept = [(a, b) for a, b in zip(stops, stops[1:]) if b[1] > a[1] and not holds_checkpoint(a[1], b[1])]
    if not kept:
        raise LogError("every block holds a checkpoint: no steady block to time")
    seconds = sum(b[0] - a[0] for a, b in kept) / 1e3
    steps = sum(b[1] - a[1] for a, b in kept) / gbs
    return [("training_step", f"{seconds / steps:.6f}", len(kept))]


READERS = {"llama2_70b_lora": lora, "bert": bert, "retinanet": retinanet, "stable_diffusion": stable_diffusion}
LOG_NAMES = {"retinanet": "ssd"}


def main():
    if len(sys.argv) < 6 or sys.argv[2] not in READERS:
        sys.exit(__doc__.split("\n\n")[0] + "\nusage: read_phases.py GIT_DIR BENCHMARK ORG SYSTEM_FOLDER RESULT_FILE...\n"
                 f"BENCHMARK: one of {', '.join(READERS)}")
    git_dir, benchmark, org, system = sys.argv[1:5]
    commit = git(git_dir, "rev-parse", "HEAD").strip()
    mirror = os.environ.get("MIRROR", "mlcommons/training_results_v4.1")
    for result in sys.argv[5:]:
        path = f"{org}/results/{system}/{LOG_NAMES.get(benchmark, benchmark)}/{result}"
        evs = events(git_dir, path)
        try:
            gbs = first(evs, "global_batch_size")["value"]
            rows = READERS[benchmark](evs, gbs)
        except LogError as e:
            # Rank-0 lines only: a log whose prefix is not "N: " reads as empty and ends here too.
            sys.exit(f"{path}: {e}")
        for phase, seconds, n in rows:
            print(f"{benchmark},{org},{system},{result},{phase},{seconds},{n},"
                  f"mlcommons/training_results_v4.1 (read at the mirror {mirror} @{commit}) {path}")


if __name__ == "__main__":
    main()
