#!/usr/bin/env python3
"""Streaming-engine benchmark: the figures the engine is judged by, measured
side by side in one run on one machine.

  sweep    host -> GPU -> host through the engine's GPU lanes from pinned
           memory, for every chunk size and stream count (the defaults come
           from here); engine_sweep.csv and engine_sweep.png
  backends host -> host at one size for cpu, gpu and hybrid, pinned and
           pageable, next to `openssl speed -multi N -evp` on all cores
  windows  seal/open with each worker window, and enc with each chunk size,
           on the CPU
  sealed   seal/open against enc with the matching cipher, to /dev/null
           and to a file, on the CPU and on GPU and hybrid workers
  cli      `warpcrypt enc` on a file in the page cache, to /dev/null and to a
           file, next to `openssl enc`, `cat` and `cp` on the same file
  age      `warpcrypt age` against the reference `age` (X25519) on a 1 GiB
           file, encrypting and decrypting, to /dev/null and to a file
  kernels  the GPU kernels on 1 GiB already in device memory, every cipher
           the page shows (`warpcrypt speed --resident device`)

Every warpcrypt figure is the median of at least five timed runs after a
warm-up (`warpcrypt speed`), and every command-line figure the median of
--runs wall-clock runs after a warm-up, kept with the fastest and slowest
run; a part's commands take turns run by run. Results go to
engine_figures.json, with the run's date, commit and machine
(bench/run_record.py) and each part's size and cipher.
"""
import argparse
import csv
import json
import os
import re
import statistics
import subprocess
import time

from run_record import run_record

MIB = 1 << 20
GIB = 1 << 30


def speed(binary, *args):
    out = subprocess.run([binary, "speed", "--json", *map(str, args)], check=True, capture_output=True,
                         text=True).stdout
    return json.loads(out)["results"][0]["median_gbps"]


def sweep(binary, out_dir, cipher, size, seconds):
    rows = []
    for streams in (1, 2, 3, 4, 6, 8):
        for chunk_mib in (1, 2, 4, 8, 16, 32, 64):
            gbps = speed(binary, "-evp", cipher, "-bytes", size, "-seconds", seconds, "--backend", "gpu",
                         "--chunk-size", f"{chunk_mib}M", "--streams", streams)
            rows.append(dict(cipher=cipher, bytes=size, streams=streams, chunk_mib=chunk_mib, gbps=gbps))
            print(f"sweep {cipher} streams={streams} chunk={chunk_mib}M: {gbps:.2f} GB/s", flush=True)
    with open(os.path.join(out_dir, "engine_sweep.csv"), "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib missing: no plot")
        return rows
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for streams in sorted({r["streams"] for r in rows}):
        series = [r for r in rows if r["streams"] == streams]
        ax.plot([r["chunk_mib"] for r in series], [r["gbps"] for r in series], marker="o",
                label=f"{streams} stream{'s' if streams > 1 else ''}")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("chunk size (MiB)")
    ax.set_ylabel("GB/s (10^9 B/s)")
    ax.set_title(f"{cipher}, {size // MIB} MiB pinned host -> GPU -> pinned host")
    ax.grid(True, alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(os.path.join(out_dir, "engine_sweep.png"), dpi=120)
    return rows


KERNEL_CIPHERS = ("aes-128-ctr", "aes-256-ctr", "aes-128-gcm", "aes-256-gcm", "chacha20", "chacha20-poly1305",
                  "salsa20")


def kernels(binary, size, seconds):
    figures = {}
    for cipher in KERNEL_CIPHERS:
        figures[cipher] = speed(binary, "-evp", cipher, "-bytes", size, "-seconds", seconds, "--backend", "gpu",
                                "--resident", "device")
        print(f"kernels {cipher}: {figures[cipher]:.2f} GB/s", flush=True)
    return {"bytes": size, "gbps": figures}


def openssl_multi(cipher, processes, seconds):
    """`openssl speed -multi N -evp CIPHER`: the 16 KiB column, in GB/s."""
    out = subprocess.run(["openssl", "speed", "-mr", "-multi", str(processes), "-seconds", str(seconds),
                          "-bytes", "16384", "-evp", cipher], check=True, capture_output=True, text=True).stdout
    # Machine-readable summary line: +F:<n>:<name>:<bytes per second>...
    match = re.search(r"^\+F:\d+:[^:]+:([\d.]+)", out, re.M)
    return float(match.group(1)) / 1e9


def backends(binary, cipher, size, seconds):
    figures = {}
    for backend in ("cpu", "gpu", "hybrid"):
        for memory in ("pinned", "pageable"):
            figures[f"{backend}-{memory}"] = speed(binary, "-evp", cipher, "-bytes", size, "-seconds", seconds,
                                                   "--backend", backend, "--memory", memory)
            print(f"{cipher} {backend} {memory}: {figures[f'{backend}-{memory}']:.2f} GB/s", flush=True)
    figures["openssl-multi"] = openssl_multi(cipher, os.cpu_count(), 3)
    print(f"openssl speed -multi {os.cpu_count()} -evp {cipher}: {figures['openssl-multi']:.2f} GB/s", flush=True)
    return {"bytes": size, "gbps": figures}


def wall(command):
    """Wall-clock seconds of one run of `command` (a shell line)."""
    start = time.perf_counter()
    subprocess.run(command, shell=True, check=True)
    return time.perf_counter() - start


def scratch_files(scratch, stem, size, *names):
    """A `size`-byte random file (read once, so it sits in the page cache) and
    the paths for the named companions, all under `scratch`."""
    source = os.path.join(scratch, f"{stem}.bin")
    subprocess.run(f"head -c {size} /dev/urandom > {source}", shell=True, check=True)
    return source, *(os.path.join(scratch, f"{stem}.{name}") for name in names)


def key_file_at(path):
    with open(path, "wb") as f:
        f.write(bytes(range(32)))
    return path


def time_commands(part, commands, size, runs):
    """Each command's median wall time over `runs` runs after a warm-up, with
    the fastest and slowest run. The runs take turns, command by command, so
    load from elsewhere on a shared machine falls on every command alike."""
    for command in commands.values():
        wall(command)
    times = {name: [] for name in commands}
    for _ in range(runs):
        for name, command in commands.items():
            times[name].append(wall(command))
    figures = {}
    for name, runs_seconds in times.items():
        seconds = statistics.median(runs_seconds)
        figures[name] = dict(seconds=seconds, gbps=size / seconds / 1e9, min_seconds=min(runs_seconds),
                             max_seconds=max(runs_seconds), runs=len(runs_seconds))
        print(f"{part} {name}: {seconds:.3f} s ({min(runs_seconds):.3f}-{max(runs_seconds):.3f}), "
              f"{size / seconds / 1e9:.2f} GB/s", flush=True)
    return {"bytes": size, "commands": figures}


def remove(*paths):
    for path in paths:
        if os.path.exists(path):
            os.remove(path)


def cli(binary, cipher, size, scratch, runs):
    source, target = scratch_files(scratch, "engine-bench", size, "out")
    key = "00" * 32
    iv = "11" * 16
    commands = {
        "cat": f"cat {source} > /dev/null",
        "openssl-devnull": f"openssl enc -{cipher} -K {key} -iv {iv} -in {source} -out /dev/null",
        "cp": f"cp {source} {target}",
        "openssl-file": f"openssl enc -{cipher} -K {key} -iv {iv} -in {source} -out {target}",
    }
    for backend in ("auto", "cpu", "gpu", "hybrid"):
        run = f"{binary} enc -{cipher} -K {key} -iv {iv} --backend {backend} -in {source}"
        commands[f"warpcrypt-{backend}-devnull"] = f"{run} -out /dev/null"
        if backend in ("auto", "cpu"):
            commands[f"warpcrypt-{backend}-file"] = f"{run} -out {target}"
    figures = {"cipher": cipher, **time_commands("cli", commands, size, runs)}
    remove(source, target)
    return figures


def sealed(binary, size, scratch, runs):
    """`warpcrypt seal` and `open` against `warpcrypt enc` with the matching
    unauthenticated cipher on the same file in the page cache: to /dev/null
    and to a file."""
    source, sealed_file, target, key_file = scratch_files(scratch, "sealed-bench", size, "sealed", "out", "key")
    key_file_at(key_file)
    commands = {}
    pairs = (("aes-256-gcm", "aes-256-ctr"), ("chacha20-poly1305", "chacha20"))
    for aead, cipher in pairs:
        enc = f"{binary} enc -{cipher} -K {'00' * 32} -iv {'11' * 16} -in {source}"
        seal = f"{binary} seal -{aead} -kfile {key_file} -in {source}"
        opener = f"{binary} open -kfile {key_file} -in {sealed_file}-{aead}"
        subprocess.run(f"{seal} -out {sealed_file}-{aead}", shell=True, check=True)
        for sink, out in (("devnull", "/dev/null"), ("file", target)):
            commands[f"enc-{cipher}-{sink}"] = f"{enc} -out {out}"
            commands[f"seal-{aead}-{sink}"] = f"{seal} -out {out}"
            commands[f"open-{aead}-{sink}"] = f"{opener} -out {out}"
        for backend in ("gpu", "hybrid"):
            commands[f"seal-{aead}-{backend}-devnull"] = f"{seal} --backend {backend} -out /dev/null"
            commands[f"open-{aead}-{backend}-devnull"] = f"{opener} --backend {backend} -out /dev/null"
    figures = time_commands("sealed", commands, size, runs)
    remove(source, target, key_file, *(f"{sealed_file}-{aead}" for aead, _ in pairs))
    return figures


def age_files(binary, size, scratch, runs):
    """`warpcrypt age` and `age` (X25519) on the same file, each direction to
    /dev/null and to a file, each tool decrypting its own file."""
    source, key_file, target = scratch_files(scratch, "age-bench", size, "key", "out")
    subprocess.run(f"{binary} age-keygen -o {key_file}", shell=True, check=True, capture_output=True)
    recipient = subprocess.run(f"{binary} age-keygen -y {key_file}", shell=True, check=True, capture_output=True,
                               text=True).stdout.strip()
    commands = {}
    for tool, program in (("age", "age"), ("warpcrypt", f"{binary} age")):
        encrypted = f"{source}.{tool}.age"
        subprocess.run(f"{program} -r {recipient} -o {encrypted} {source}", shell=True, check=True)
        for sink, out in (("devnull", "/dev/null"), ("file", target)):
            commands[f"{tool}-encrypt-{sink}"] = f"{program} -r {recipient} -o {out} {source}"
            commands[f"{tool}-decrypt-{sink}"] = f"{program} -d -i {key_file} -o {out} {encrypted}"
    figures = time_commands("age", commands, size, runs)
    remove(source, key_file, target, *(f"{source}.{tool}.age" for tool in ("age", "warpcrypt")))
    return figures


def windows(binary, size, scratch, runs):
    """seal and open (aes-256-gcm, 1 MiB chunks) with each worker window,
    and enc -aes-256-ctr with each engine chunk, all on the CPU, on a
    page-cached file to /dev/null."""
    source, sealed_file, key_file = scratch_files(scratch, "window-bench", size, "sealed", "key")
    key_file_at(key_file)
    subprocess.run(f"{binary} seal -kfile {key_file} -in {source} -out {sealed_file}", shell=True, check=True)
    enc = f"{binary} enc -aes-256-ctr -K {'00' * 32} -iv {'11' * 16} -in {source} -out /dev/null"
    commands = {}
    for window in ("256K", "1M", "2M", "4M", "8M", "32M"):
        commands[f"enc-aes-256-ctr-{window}"] = f"{enc} --chunk-size {window}"
        commands[f"seal-{window}"] = f"{binary} seal -kfile {key_file} --window {window} -in {source} -out /dev/null"
        commands[f"open-{window}"] = f"{binary} open -kfile {key_file} --window {window} -in {sealed_file} -out /dev/null"
    figures = time_commands("windows", commands, size, runs)
    remove(source, sealed_file, key_file)
    return figures


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", default="build/warpcrypt")
    parser.add_argument("--out", default=".")
    parser.add_argument("--parts", default="sweep,backends,cli,sealed")
    parser.add_argument("--seconds", type=float, default=1.5, help="timed seconds per speed figure")
    parser.add_argument("--scratch", default="/tmp", help="where the CLI's test file goes (page cache)")
    parser.add_argument("--runs", type=int, default=5,
                        help="timed runs per command of the cli, windows, sealed and age parts")
    args = parser.parse_args()
    measure = {
        "kernels": lambda: kernels(args.binary, GIB, args.seconds),
        "sweep": lambda: sweep(args.binary, args.out, "aes-128-ctr", GIB, args.seconds),
        "backends": lambda: {c: backends(args.binary, c, GIB, args.seconds) for c in ("aes-128-ctr", "aes-256-ctr")},
        "cli": lambda: cli(args.binary, "aes-256-ctr", 4 * GIB, args.scratch, args.runs),
        "windows": lambda: windows(args.binary, 4 * GIB, args.scratch, args.runs),
        "sealed": lambda: sealed(args.binary, 4 * GIB, args.scratch, args.runs),
        "age": lambda: age_files(args.binary, GIB, args.scratch, args.runs),
    }
    parts = args.parts.split(",")
    unknown = sorted(set(parts) - set(measure))
    if unknown:
        parser.error(f"unknown parts: {', '.join(unknown)}")
    # Written after every part, so that a run cut short keeps what it measured.
    figures = {"run": run_record(), "scratch": args.scratch}
    for part in parts:
        figures[part] = measure[part]()
        with open(os.path.join(args.out, "engine_figures.json"), "w") as f:
            json.dump(figures, f, indent=1)


if __name__ == "__main__":
    main()
