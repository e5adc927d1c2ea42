#!/usr/bin/env python3
"""Per-call latency of warpcrypt.aead against pyca/cryptography, side by side.

AESGCM (AES-256) and ChaCha20Poly1305, encrypt and decrypt, with 12-byte
nonces and 16 bytes of associated data, in the same process. A round times
--repeats timeit loops, each sized to run about --target seconds, and keeps
the median time per call; warpcrypt and pyca take three rounds each, in
turns, so that a neighbour's load falls on both, and each cell is the median
of its three. A benchmark, not a test: it asserts nothing beyond both
libraries giving the same bytes.

    .venv/bin/python bench/python_aead_bench.py [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import timeit
from collections.abc import Callable

from cryptography.hazmat.primitives.ciphers import aead as pyca_aead

import warpcrypt
from run_record import run_record
from warpcrypt import aead as wc_aead

SIZES = {"64 B": 64, "1 KiB": 1024, "16 KiB": 16 * 1024, "1 MiB": 1024 * 1024}
CONSTRUCTIONS = {"AESGCM": 32, "ChaCha20Poly1305": 32}


def per_call(fn: Callable[[], object], target: float, repeats: int) -> float:
    """Median seconds per call of `fn` over `repeats` loops of about `target` s."""
    number, _ = timeit.Timer(fn).autorange()
    elapsed = timeit.Timer(fn).timeit(number)
    number = max(1, int(number * target / max(elapsed, 1e-9)))
    return statistics.median(timeit.Timer(fn).repeat(repeats, number)) / number


def measure(target: float, repeats: int, sizes: dict[str, int]) -> list[dict[str, object]]:
    rows = []
    nonce, aad = os.urandom(12), os.urandom(16)
    for name, key_size in CONSTRUCTIONS.items():
        key = os.urandom(key_size)
        ours, theirs = getattr(wc_aead, name)(key), getattr(pyca_aead, name)(key)
        for label, size in sizes.items():
            data = os.urandom(size)
            sealed = ours.encrypt(nonce, data, aad)
            if sealed != theirs.encrypt(nonce, data, aad):
                raise SystemExit(f"{name} {label}: warpcrypt and pyca/cryptography disagree")
            calls = {
                "encrypt": (lambda: ours.encrypt(nonce, data, aad), lambda: theirs.encrypt(nonce, data, aad)),
                "decrypt": (lambda: ours.decrypt(nonce, sealed, aad), lambda: theirs.decrypt(nonce, sealed, aad)),
            }
            for direction, (warp_call, pyca_call) in calls.items():
                warp_times, pyca_times = [], []
                # In turns: three rounds each, the median of the rounds kept.
                for _ in range(3):
                    warp_times.append(per_call(warp_call, target, repeats))
                    pyca_times.append(per_call(pyca_call, target, repeats))
                rows.append({
                    "aead": name, "direction": direction, "size": size, "label": label,
                    "warpcrypt_us": statistics.median(warp_times) * 1e6,
                    "pyca_us": statistics.median(pyca_times) * 1e6,
                })
    return rows


def print_table(rows: list[dict[str, object]]) -> None:
    print(f"{'aead':<17} {'call':<8} {'size':>7} {'warpcrypt µs':>13} {'pyca µs':>10} {'warp/pyca':>10}")
    for row in rows:
        ratio = float(row["warpcrypt_us"]) / float(row["pyca_us"])  # type: ignore[arg-type]
        print(f"{row['aead']:<17} {row['direction']:<8} {row['label']:>7} {row['warpcrypt_us']:>13.2f} "
              f"{row['pyca_us']:>10.2f} {ratio:>10.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", metavar="PATH", help="also write the figures to PATH")
    parser.add_argument("--repeats", type=int, default=5, help="timeit repeats per round (default 5)")
    parser.add_argument("--target", type=float, default=0.05, help="seconds per timeit loop (default 0.05)")
    parser.add_argument("--sizes", nargs="+", choices=list(SIZES), default=list(SIZES), help="message sizes")
    args = parser.parse_args()
    rows = measure(args.target, args.repeats, {label: SIZES[label] for label in args.sizes})
    print_table(rows)
    if args.json:
        import cryptography

        report = {
            "run": run_record(), "python": platform.python_version(),
            "warpcrypt": warpcrypt.__version__, "cryptography": cryptography.__version__,
            "repeats": args.repeats, "target_s": args.target, "rows": rows,
        }
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump(report, out, indent=2)
            out.write("\n")


if __name__ == "__main__":
    main()
