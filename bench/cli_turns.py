#!/usr/bin/env python3
"""Two builds of the CLI, before and after a change, on the same commands in
turns: each round runs every workload once with each binary, so load from
elsewhere falls on both alike. Writes the JSON that scripts/performance-page.py
reads for a before-and-after table (GB/s from wall time, process start
included), with the run's record (bench/run_record.py).

    python3 bench/cli_turns.py --before /tmp/warpcrypt-before --after build/warpcrypt \\
        --before-commit abc1234 --rounds 7 --size 1G --json out.json

The workloads run on one random file of --size in --scratch (the page cache
where that is /dev/shm); {w} in a command is the binary, {in} the file, {key}
a key file, {out} an output file beside it.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import tempfile
import time

from run_record import run_record

KEY_HEX = "00" * 32
IV_HEX = "00" * 15 + "01"
WORKLOADS = {
    "enc -aes-256-ctr, file -> /dev/null": f"{{w}} enc -aes-256-ctr -K {KEY_HEX} -iv {IV_HEX} -in {{in}} -out /dev/null",
    "enc -aes-256-ctr, file -> file": f"{{w}} enc -aes-256-ctr -K {KEY_HEX} -iv {IV_HEX} -in {{in}} -out {{out}}",
    "enc -aes-256-cbc (one stream), file -> /dev/null":
        f"{{w}} enc -aes-256-cbc -K {KEY_HEX} -iv {IV_HEX} -in {{in}} -out /dev/null",
    "enc -d -aes-256-ctr of a salted file (its body 16 bytes into the file), file -> /dev/null":
        "{w} enc -d -aes-256-ctr -pbkdf2 -pass pass:bench -in {in}.salted -out /dev/null",
    "seal, file -> /dev/null": "{w} seal -keyfile {key} -in {in} -out /dev/null",
}


def wall(command: str) -> float:
    start = time.perf_counter()
    subprocess.run(command, shell=True, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", required=True)
    parser.add_argument("--after", required=True)
    parser.add_argument("--before-commit", required=True)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--size", default="1G", help="the file's size, as head -c takes it")
    parser.add_argument("--scratch", default="/dev/shm")
    parser.add_argument("--json", required=True)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(dir=args.scratch) as scratch:
        plain, key, out = (os.path.join(scratch, name) for name in ("plain", "key", "out"))
        subprocess.run(f"head -c {args.size} /dev/urandom > {plain} && head -c 32 /dev/urandom > {key}",
                       shell=True, check=True)
        subprocess.run(f"{args.after} enc -aes-256-ctr -pbkdf2 -pass pass:bench -in {plain} -out {plain}.salted",
                       shell=True, check=True)
        size = os.path.getsize(plain)
        binaries = {"before": args.before, "after": args.after}
        rows = {label: {"workload": label, "unit": "GB/s", "before": [], "after": []} for label in WORKLOADS}
        for name, binary in binaries.items():  # a warm-up of each
            wall(WORKLOADS["seal, file -> /dev/null"].format(w=binary, key=key, **{"in": plain}))
        for _ in range(args.rounds):
            for label, command in WORKLOADS.items():
                for name, binary in binaries.items():
                    seconds = wall(command.format(w=binary, key=key, out=out, **{"in": plain}))
                    rows[label][name].append(round(size / seconds / 1e9, 3))
                    if os.path.exists(out):
                        os.remove(out)
    run = run_record()
    gpus = ", ".join(g["name"] for g in run["gpus"]) or "no GPU"
    report = {"device": f"{run['cpu']}, {run['cores']} cores, {gpus}", "date": run["date"], "commit": run["commit"],
              "before_commit": args.before_commit, "run": run,
              "command": f"`bench/cli_turns.py --rounds {args.rounds} --size {args.size}`: one {args.size} random file"
                         f" in {args.scratch}, {args.rounds} rounds, before and after in turns",
              "rows": list(rows.values())}
    with open(args.json, "w") as f:
        json.dump(report, f, indent=1)
    for row in rows.values():
        print(f"{row['workload']}: before {sorted(row['before'])}, after {sorted(row['after'])}")


if __name__ == "__main__":
    main()
