#!/usr/bin/env python3
"""Plots bench/sweep.py's CSV: throughput against message size, one panel per
cipher and direction, one line per series (log-log), plus a speedup table.

usage: bench/plot.py bench-results/sweep.csv [--out DIR]
"""
import argparse
import collections
import csv
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

SERIES_STYLE = {
    "cpu-1": ("CPU, 1 thread", "tab:gray", "--"),
    "cpu-all": ("CPU, all cores", "black", "-"),
    "gpu-ref": ("GPU reference kernel", "tab:orange", "--"),
    "gpu-ref+io": ("GPU reference + transfers", "tab:orange", ":"),
    "gpu": ("GPU optimised kernel", "tab:green", "-"),
    "gpu+io": ("GPU optimised + transfers", "tab:green", ":"),
}


def load(path):
    panels = collections.defaultdict(lambda: collections.defaultdict(list))
    for row in csv.DictReader(open(path)):
        key = (row["cipher"], row["direction"])
        panels[key][row["series"]].append((int(row["bytes"]), float(row["median_gbps"])))
    return panels


def human(size):
    for unit in ["B", "KiB", "MiB", "GiB"]:
        if size < 1024:
            return f"{size:g} {unit}"
        size /= 1024
    return f"{size:g} TiB"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("csv")
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    out = args.out or os.path.dirname(args.csv) or "."
    panels = load(args.csv)

    keys = sorted(panels)
    columns = 3
    rows = (len(keys) + columns - 1) // columns
    fig, axes = plt.subplots(rows, columns, figsize=(6 * columns, 4 * rows), squeeze=False)
    for ax, key in zip(axes.flat, keys):
        for series, points in sorted(panels[key].items()):
            label, color, style = SERIES_STYLE.get(series, (series, None, "-"))
            points.sort()
            ax.plot([p[0] for p in points], [p[1] for p in points], style, color=color, label=label, marker=".")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_title(f"{key[0]} {key[1]}")
        ax.set_xlabel("message size (bytes)")
        ax.set_ylabel("GB/s (10^9 B/s)")
        ax.grid(True, which="both", alpha=0.3)
    for ax in axes.flat[len(keys):]:
        ax.axis("off")
    axes.flat[0].legend(fontsize=8)
    fig.tight_layout()
    path = os.path.join(out, "throughput_vs_size.png")
    fig.savefig(path, dpi=110)
    print(f"wrote {path}")

    # Speedup table at the largest size each pair of series shares.
    with open(os.path.join(out, "speedup.md"), "w") as table:
        table.write("| cipher | direction | size | cpu-all GB/s | gpu GB/s | gpu+io GB/s | gpu / cpu-all | gpu+io / cpu-all | gpu / gpu-ref |\n")
        table.write("|---|---|---|---|---|---|---|---|---|\n")
        for key in keys:
            series = {name: dict(points) for name, points in panels[key].items()}
            shared = set(series.get("cpu-all", {})) & set(series.get("gpu", {})) & set(series.get("gpu+io", {})) \
                & set(series.get("gpu-ref", {}))
            if not shared:
                continue
            size = max(shared)
            cpu, gpu, gpu_io, ref = (series[n][size] for n in ("cpu-all", "gpu", "gpu+io", "gpu-ref"))
            table.write(f"| {key[0]} | {key[1]} | {human(size)} | {cpu:.2f} | {gpu:.1f} | {gpu_io:.1f} | "
                        f"{gpu / cpu:.1f}x | {gpu_io / cpu:.1f}x | {gpu / ref:.1f}x |\n")
    print(f"wrote {os.path.join(out, 'speedup.md')}")

    # Break-even: the smallest measured size from which the GPU with its
    # transfers beats the CPU on all cores at every larger size too. The
    # automatic backend's threshold (wc_auto_gpu_min_bytes) is set from it.
    with open(os.path.join(out, "break_even.md"), "w") as table:
        table.write("| cipher | direction | GPU+transfers faster than all CPU cores from |\n|---|---|---|\n")
        for key in keys:
            cpu = dict(panels[key].get("cpu-all", []))
            gpu = dict(panels[key].get("gpu+io", []))
            shared = sorted(set(cpu) & set(gpu))
            winning = [size for size in shared if all(gpu[s] > cpu[s] for s in shared if s >= size)]
            table.write(f"| {key[0]} | {key[1]} | {human(min(winning)) if winning else 'never (in the sizes measured)'} |\n")
    print(f"wrote {os.path.join(out, 'break_even.md')}")


if __name__ == "__main__":
    main()
