#!/usr/bin/env python3
"""Benchmark sweep: every GPU mode and key size, every backend, 16 B to 4 GiB.

Runs `warpcrypt speed --json` for each combination and writes sweep.json and
sweep.csv, one row per (cipher, direction, series, size). The series are the
ones the classic GPU-AES studies compare:

  cpu-1       CPU backend, one thread            (host memory)
  cpu-all     CPU backend, every core            (host memory)
  gpu-ref     one-thread-per-block reference kernel, device-resident (kernel only)
  gpu         optimised kernels, device-resident (kernel only)
  gpu-ref+io  reference kernel from pinned host memory and back (with transfers)
  gpu+io      optimised kernels from pinned host memory and back (with transfers)

The reference series run `--backend gpu` with WARPCRYPT_GPU_KERNELS=reference
in the environment, which swaps in the reference kernels. Every figure is the
median of at least five timed runs after a warm-up, as `warpcrypt speed`
measures it. Plot with bench/plot.py.
"""
import argparse
import csv
import json
import os
import subprocess
import sys

# (cipher, direction) pairs the GPU runs.
AES_MODES = [("ecb", "encrypt"), ("ecb", "decrypt"), ("ctr", "encrypt"), ("cbc", "decrypt"), ("cfb", "decrypt")]
STREAM_CIPHERS = ["chacha20", "salsa20"]

SERIES = {
    "cpu-1": dict(backend="cpu", resident="host", threads=1),
    "cpu-all": dict(backend="cpu", resident="host"),
    "gpu-ref": dict(backend="gpu", resident="device", reference_kernels=True),
    "gpu": dict(backend="gpu", resident="device"),
    "gpu-ref+io": dict(backend="gpu", resident="host", reference_kernels=True),
    "gpu+io": dict(backend="gpu", resident="host"),
}


def targets(key_sizes):
    for bits in key_sizes:
        for mode, direction in AES_MODES:
            yield f"aes-{bits}-{mode}", direction
    for name in STREAM_CIPHERS:
        yield name, "encrypt"


def sizes(smallest, largest, factor):
    size = smallest
    while size <= largest:
        yield size
        size *= factor


def run_speed(binary, cipher, direction, series, size_list, seconds):
    spec = SERIES[series]
    command = [binary, "speed", "-evp", cipher, "--json", "-seconds", str(seconds),
               "--backend", spec["backend"], "--resident", spec["resident"]]
    if "threads" in spec:
        command += ["--threads", str(spec["threads"])]
    if direction == "decrypt":
        command.append("-decrypt")
    for size in size_list:
        command += ["-bytes", str(size)]
    environment = dict(os.environ)
    environment.pop("WARPCRYPT_GPU_KERNELS", None)
    if spec.get("reference_kernels"):
        environment["WARPCRYPT_GPU_KERNELS"] = "reference"
    result = subprocess.run(command, capture_output=True, text=True, env=environment)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed: {result.stderr.strip()}")
    return json.loads(result.stdout)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", default="build/warpcrypt")
    parser.add_argument("--out", default="bench-results")
    parser.add_argument("--seconds", type=float, default=0.1, help="timed seconds per size (over 5 runs)")
    parser.add_argument("--factor", type=int, default=16, help="size step")
    parser.add_argument("--max-bytes", type=int, default=4 << 30)
    parser.add_argument("--cpu-max-bytes", type=int, default=1 << 30,
                        help="largest size for the CPU and reference series, which are slow")
    parser.add_argument("--key-sizes", default="128,192,256")
    parser.add_argument("--series", default=",".join(SERIES))
    parser.add_argument("--ciphers", default="", help="only these ciphers (comma-separated); default all")
    args = parser.parse_args()

    os.makedirs(args.out, exist_ok=True)
    raw = []
    key_sizes = [int(k) for k in args.key_sizes.split(",")]
    fields = ["cipher", "direction", "series", "device", "bytes", "median_gbps", "runs"]
    # Rows are written as they come, so an interrupted sweep keeps its data.
    csv_file = open(os.path.join(args.out, "sweep.csv"), "w", newline="")
    writer = csv.DictWriter(csv_file, fieldnames=fields)
    writer.writeheader()
    rows = 0
    only = set(filter(None, args.ciphers.split(",")))
    for cipher, direction in targets(key_sizes):
        if only and cipher not in only:
            continue
        for series in args.series.split(","):
            slow = series.startswith("cpu") or series.startswith("gpu-ref")
            largest = min(args.max_bytes, args.cpu_max_bytes) if slow else args.max_bytes
            report = run_speed(args.binary, cipher, direction, series, list(sizes(16, largest, args.factor)),
                               args.seconds)
            raw.append(dict(series=series, direction=direction, report=report))
            for result in report["results"]:
                writer.writerow(dict(cipher=cipher, direction=direction, series=series, device=report["device"],
                                     bytes=result["bytes"], median_gbps=result["median_gbps"],
                                     runs=len(result["runs_gbps"])))
                rows += 1
            csv_file.flush()
            best = max(r["median_gbps"] for r in report["results"])
            print(f"{cipher:12s} {direction:7s} {series:10s} best {best:9.2f} GB/s", flush=True)

    csv_file.close()
    with open(os.path.join(args.out, "sweep.json"), "w") as f:
        json.dump(raw, f, indent=1)
    print(f"wrote {rows} rows to {args.out}/sweep.csv")


if __name__ == "__main__":
    sys.exit(main())
