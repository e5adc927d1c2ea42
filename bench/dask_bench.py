#!/usr/bin/env python3
"""warpcrypt.dask throughput on one machine: encrypt_files over a set of
generated files (16 GiB by default) on local Dask clusters of 1, 2, 4 and 8
CPU workers, and with a GPU worker added, written as JSON.

    python bench/dask_bench.py --out bench-results/dask.json
    python bench/dask_bench.py --total 2G --cpu-workers 1,2 --no-gpu    # a quick look
    python bench/dask_bench.py --plot-from docs/bench/dask_h100.json --plot docs/bench/dask_scaling.png

Each CPU worker is a process with CUDA hidden from it (CUDA_VISIBLE_DEVICES
empty), one Dask thread and --threads library threads per file (by default
the cores divided by the largest CPU worker count, so the largest cluster
uses every core once). The GPU worker sees GPU --gpu-index and runs the
library's hybrid backend (its GPU and --threads CPU threads). Inputs are
generated once into --dir and read once before timing, so they come from
the page cache; each cluster encrypts one file per worker untimed before
its runs, and each run's outputs are deleted after it. Disk: the inputs
plus one run's outputs (twice --total; three times with --decrypt).

GB/s are 10^9 bytes of input per second of wall time, from the job's start
(planning included) to its last file, on a cluster already started and
warmed up. With --repeat N every configuration runs N times and the median
is reported beside every run.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import socket
import statistics
import sys
import time
from pathlib import Path

import dask
import distributed
import numpy as np

from run_record import run_record
import warpcrypt
from warpcrypt.dask import MANIFEST_SUFFIX, decrypt_files, encrypt_files

GENERATOR_PIECE = 64 << 20
MASTER_KEY = bytes(range(32))


def remove_job_tree(tree: Path) -> None:
    """A job's output tree and the manifest beside it, so that the next run
    starts afresh."""
    shutil.rmtree(tree, ignore_errors=True)
    Path(f"{tree}{MANIFEST_SUFFIX}").unlink(missing_ok=True)


def parse_size(text: str) -> int:
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
    text = text.strip().upper()
    return int(text[:-1]) * units[text[-1]] if text[-1] in units else int(text)


def generate_inputs(directory: Path, total: int, file_size: int) -> list[Path]:
    """total / file_size files of AES-CTR keystream (incompressible, and made
    at GB/s); files already there with the right size are kept."""
    directory.mkdir(parents=True, exist_ok=True)
    count = max(1, total // file_size)
    paths = [directory / f"part-{i:05d}.bin" for i in range(count)]
    for index, path in enumerate(paths):
        if path.is_file() and path.stat().st_size == file_size:
            continue
        zeros = np.zeros(min(GENERATOR_PIECE, file_size), dtype=np.uint8)
        with open(path, "wb") as file:
            for offset in range(0, file_size, GENERATOR_PIECE):
                piece = zeros[: min(GENERATOR_PIECE, file_size - offset)]
                iv = index.to_bytes(8, "big") + offset.to_bytes(8, "big")
                file.write(warpcrypt.encrypt("aes-128-ctr", MASTER_KEY[:16], iv, piece))
    # Only files of this script's own naming go: --dir may be a folder of
    # the user's.
    for stale in set(directory.glob("part-*.bin")) - set(paths):
        stale.unlink()
    return paths


def read_into_page_cache(paths: list[Path]) -> None:
    for path in paths:
        with open(path, "rb") as file:
            while file.read(GENERATOR_PIECE):
                pass


def make_cluster(cpu_workers: int, gpu_index: str | None) -> distributed.SpecCluster:
    def worker(visible_devices: str) -> dict:
        # One Dask thread: the library runs its own threads under each file.
        return {"cls": distributed.Nanny,
                "options": {"nthreads": 1, "env": {"CUDA_VISIBLE_DEVICES": visible_devices}}}

    workers = {f"cpu-{i}": worker("") for i in range(cpu_workers)}
    if gpu_index is not None:
        workers["gpu-0"] = worker(gpu_index)
    return distributed.SpecCluster(workers=workers, scheduler={
        "cls": distributed.Scheduler, "options": {"dashboard_address": ":0"}})


def warm_up(dask_worker) -> dict:
    """On each worker before timing: load the library and the CUDA runtime,
    and say which devices the worker sees."""
    return {"name": dask_worker.name, "devices": [d.name for d in warpcrypt.devices()]}


def run_configuration(args, inputs: Path, cpu_workers: int, gpu_index: str | None) -> dict:
    parts = ([f"cpu-{cpu_workers}"] if cpu_workers else []) + (["gpu-1"] if gpu_index is not None else [])
    label = "+".join(parts)
    runs = []
    with make_cluster(cpu_workers, gpu_index) as cluster, distributed.Client(cluster) as client:
        client.wait_for_workers(cpu_workers + (gpu_index is not None))
        workers = client.run(warm_up)
        names = {address: info["name"] for address, info in workers.items()}
        # An untimed job of one file per worker runs every code path once.
        warm_files = sorted(inputs.iterdir())[: len(workers)]
        encrypt_files(warm_files, args.dir / "warm-up", key=MASTER_KEY, client=client, cipher=args.cipher,
                      threads=args.threads)
        remove_job_tree(args.dir / "warm-up")
        for repeat in range(args.repeat):
            out = args.dir / f"out-{label}"
            remove_job_tree(out)
            report = encrypt_files(inputs, out, key=MASTER_KEY, client=client, cipher=args.cipher,
                                   threads=args.threads)
            if not report.ok:
                sys.exit(f"{label}: {len(report.failed)} files failed, first: {next(iter(report.failed.items()))}")
            run = {"seconds": report.seconds, "bytes": report.bytes, "gb_per_s": report.throughput / 1e9,
                   "workers": [{"name": names.get(w.worker, w.worker), "backends": w.backends, "files": w.files,
                                "bytes": w.bytes, "gpu_bytes": w.gpu_bytes, "busy_seconds": w.busy_seconds,
                                "busy_gb_per_s": w.throughput / 1e9} for w in report.workers]}
            if args.decrypt:
                back = decrypt_files(out, args.dir / f"back-{label}", key=MASTER_KEY, client=client,
                                     threads=args.threads)
                run["decrypt_seconds"], run["decrypt_gb_per_s"] = back.seconds, back.throughput / 1e9
                remove_job_tree(args.dir / f"back-{label}")
            remove_job_tree(out)
            runs.append(run)
            print(f"{label:>14} run {repeat + 1}/{args.repeat}: {run['gb_per_s']:7.3f} GB/s encrypt"
                  + (f", {run['decrypt_gb_per_s']:7.3f} GB/s decrypt" if args.decrypt else ""), flush=True)
    median = statistics.median(run["seconds"] for run in runs)
    return {"config": label, "cpu_workers": cpu_workers, "gpu_workers": int(gpu_index is not None),
            "worker_devices": {info["name"]: info["devices"] for info in workers.values()},
            "median_seconds": median, "median_gb_per_s": runs[0]["bytes"] / median / 1e9, "runs": runs}


def plot_scaling(report: dict, path: Path) -> None:
    """GB/s against CPU workers, without and with the GPU worker."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    for gpu_workers, label in ((0, "CPU workers"), (1, "CPU workers + 1 GPU worker")):
        points = sorted((r["cpu_workers"], r["median_gb_per_s"]) for r in report["results"]
                        if r["gpu_workers"] == gpu_workers)
        if points:
            ax.plot(*zip(*points), marker="o", label=label)
    ax.set_xlabel("CPU workers")
    ax.set_ylabel("GB/s (10^9 B/s of input)")
    gib = report["total_bytes"] / (1 << 30)
    ax.set_title(f"warpcrypt.dask encrypt_files, {report['cipher']}, {gib:.0f} GiB in {report['files']} files")
    ax.grid(True, alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    print(f"plotted: {path}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--total", type=parse_size, default=16 << 30, help="bytes of input (default 16G)")
    parser.add_argument("--file-size", type=parse_size, default=256 << 20, help="bytes per file (default 256M)")
    parser.add_argument("--cpu-workers", default="1,2,4,8", help="CPU worker counts to run (default 1,2,4,8)")
    parser.add_argument("--gpu", action=argparse.BooleanOptionalAction, default=None,
                        help="also run with a GPU worker (default: when this machine has a GPU)")
    parser.add_argument("--gpu-index", default="0", help="the GPU the GPU worker sees (default 0)")
    parser.add_argument("--threads", type=int, default=0,
                        help="library threads per file on each worker (default: cores / largest CPU count)")
    parser.add_argument("--cipher", default="aes-256-gcm", help="as encrypt_files (default aes-256-gcm)")
    parser.add_argument("--repeat", type=int, default=3,
                        help="runs per configuration; the median is reported (default 3)")
    parser.add_argument("--decrypt", action="store_true", help="also time decrypt_files")
    parser.add_argument("--dir", type=Path, default=Path("/tmp/warpcrypt-dask-bench"),
                        help="scratch folder for inputs and outputs (default /tmp/warpcrypt-dask-bench)")
    parser.add_argument("--out", type=Path, default=Path("bench-results/dask.json"), help="the JSON to write")
    parser.add_argument("--plot", type=Path, help="also draw the scaling curve into this PNG (needs matplotlib)")
    parser.add_argument("--plot-from", type=Path, help="draw --plot from this earlier JSON instead of running")
    args = parser.parse_args()
    if args.plot_from:
        plot_scaling(json.loads(args.plot_from.read_text()), args.plot or args.plot_from.with_suffix(".png"))
        return

    cpu_counts = [int(n) for n in args.cpu_workers.split(",") if n]
    cores = os.cpu_count() or 1
    args.threads = args.threads or max(1, cores // max(cpu_counts, default=1))
    if args.gpu is None:
        args.gpu = bool(warpcrypt.devices())
    devices = warpcrypt.devices()
    if args.gpu and not devices:
        sys.exit("--gpu: this machine has no CUDA device that warpcrypt can use")

    inputs = args.dir / "input"
    started = time.perf_counter()
    paths = generate_inputs(inputs, args.total, args.file_size)
    read_into_page_cache(paths)
    print(f"{len(paths)} files of {args.file_size} bytes ready in {time.perf_counter() - started:.1f} s; "
          f"{args.threads} library threads per file", flush=True)

    configurations = [(n, None) for n in cpu_counts]
    if args.gpu:
        configurations += [(0, args.gpu_index)] + [(n, args.gpu_index) for n in cpu_counts]
    results = [run_configuration(args, inputs, n, gpu) for n, gpu in configurations]

    report = {
        "benchmark": "warpcrypt.dask encrypt_files on a LocalCluster-like SpecCluster", "run": run_record(),
        "host": socket.gethostname(), "cpu_count": cores, "platform": platform.platform(),
        "devices": [d.name for d in devices], "warpcrypt": warpcrypt.__version__,
        "dask": dask.__version__, "distributed": distributed.__version__,
        "cipher": args.cipher, "files": len(paths), "file_size": args.file_size,
        "total_bytes": len(paths) * args.file_size, "threads_per_worker": args.threads, "repeat": args.repeat,
        "results": results,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1) + "\n")
    print(f"\n{'configuration':>14} {'GB/s':>8}")
    for result in results:
        print(f"{result['config']:>14} {result['median_gb_per_s']:8.3f}")
    print(f"written: {args.out}")
    if args.plot:
        plot_scaling(report, args.plot)


if __name__ == "__main__":
    main()
