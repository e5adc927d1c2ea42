#!/usr/bin/env python3
"""A seeded, deterministic mutation suite for age files.

    .venv/bin/python tests/attack/age_mutations.py [--seed S] [--long] [--cli build/warpcrypt]
                                                   [--jobs N] [--json REPORT]

It makes a few small age files to an X25519 key, binary and armored, with
`warpcrypt age` and with the reference `age` (a handful of 64 KiB chunks
plus a partial one, and an empty file), damages them in many ways and
decrypts each damaged file with `warpcrypt age -d`:

  truncate          cut at every chunk boundary (the header's end, the
                    nonce's end, each chunk's start, the file's end)
                    +-{0, 1, 15, 16, 17} bytes, and inside every header line
  truncate+append   the same cuts followed by 1 byte, 16 bytes or a whole
                    fake chunk of arbitrary bytes
  header lines      every header line dropped, duplicated, or swapped with
                    the next; a space added or doubled in each
  bit flip          1 to 3 random bits flipped across header and body
  reorder           chunks swapped, dropped, duplicated
  splice            the header, or a chunk, from a second file of the same
                    plaintext to the same key
  armor             a character of the armor changed, a line split or
                    joined, the end line cut

Each damaged file is decrypted whole from -i FILE and from a pipe, and
binary files also over byte ranges (--offset/--length from a regular file).
The unmodified files go through the same opens as controls that must
succeed.

Acceptance rule. A whole-file decryption of a damaged file must fail: the
header's MAC covers every header byte, its base64 has one spelling, and
every payload byte is under a chunk's tag whose nonce holds its index and
last flag, so no other bytes decrypt (the armor's only freedom is the
whitespace around it and CRLF line ends, which the armor mutations never
make). A range may succeed only if the header and nonce are unchanged and
every chunk the range reads (the last one whenever the range reaches the
damaged file's end) is byte-for-byte the original chunk in the same place,
with the same lastness; then its output must be exactly the original slice.
Anything else that succeeds is *wrongly accepted*. Problems also counted:
wrongly rejected (a control that failed), crashed (a signal, an exit status
>= 128, a sanitizer report), hung (no exit within 20 s), left behind (an -o
file or temporary after a failure), error not one line. Exits 1 on any
problem, 2 if it cannot set up.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Optional

from outcomes import (ACCEPTED_CORRECTLY, CRASHED, ERROR_NOT_ONE_LINE, HUNG, LEFT_BEHIND, PROBLEMS,
                      REJECTED, SANITIZER_REPORT, TRIED, WRONGLY_ACCEPTED, WRONGLY_REJECTED)

REPO_ROOT = Path(__file__).resolve().parents[2]
CHUNK = 64 * 1024
SEALED_CHUNK = CHUNK + 16
NONCE_LEN = 16
TIMEOUT_S = 20
ARMOR_BEGIN = b"-----BEGIN AGE ENCRYPTED FILE-----"



@dataclass
class Original:
    name: str
    data: bytes  # the age file
    plain: bytes
    armored: bool

    @property
    def body_offset(self) -> int:
        """Where the first chunk starts: after the MAC line and the nonce."""
        return self.data.index(b"\n", self.data.index(b"\n--- ") + 1) + 1 + NONCE_LEN


@dataclass
class Case:
    original: Original
    kind: str
    data: bytes
    control: bool = False


def chunks_of(data: bytes, body: int) -> list[bytes]:
    """The sealed chunks a reader sees in `data`: its layout from its size."""
    payload = data[body:]
    return [payload[i:i + SEALED_CHUNK] for i in range(0, len(payload), SEALED_CHUNK)] or [b""]


# ---- the damage ---------------------------------------------------------------


def binary_mutations(o: Original, twin: Original, rng: random.Random, long: bool) -> Iterator[Case]:
    data = o.data
    body = o.body_offset
    header_end = body - NONCE_LEN
    cuts = {header_end, body, len(data)}
    cuts.update(body + i * SEALED_CHUNK for i in range(len(chunks_of(data, body)) + 1))
    line_starts = [0] + [i + 1 for i, byte in enumerate(data[:header_end]) if byte == 0x0A]
    for cut in sorted(cuts):
        for delta in (-17, -16, -15, -1, 0, 1, 15, 16, 17) if long else (-16, -1, 0, 1, 16):
            at = cut + delta
            if 0 <= at < len(data):
                yield Case(o, f"truncate@{at}", data[:at])
                for extra in (b"\x00", bytes(rng.getrandbits(8) for _ in range(16)),
                              bytes(rng.getrandbits(8) for _ in range(SEALED_CHUNK)) if long or at == body else b""):
                    if extra and (long or delta == 0):
                        yield Case(o, f"truncate@{at}+{len(extra)}", data[:at] + extra)
    for start in line_starts[1:]:
        yield Case(o, f"cut-in-line@{start + 3}", data[:start + 3])
    # Header lines: dropped, duplicated, swapped, spaced.
    header = data[:header_end]
    lines = header.split(b"\n")[:-1]
    for i in range(len(lines)):
        variants = {
            "drop": lines[:i] + lines[i + 1:],
            "duplicate": lines[:i + 1] + lines[i:],
            "swap": lines[:i] + lines[i + 1:i + 2] + lines[i:i + 1] + lines[i + 2:] if i + 1 < len(lines) else None,
            "space-end": lines[:i] + [lines[i] + b" "] + lines[i + 1:],
            "space-double": lines[:i] + [lines[i].replace(b" ", b"  ", 1)] + lines[i + 1:],
        }
        for name, changed in variants.items():
            if changed is not None and changed != lines:
                yield Case(o, f"line{i}-{name}", b"\n".join(changed) + b"\n" + data[header_end:])
    for n in range(40 if long else 8):
        flipped = bytearray(data)
        for _ in range(rng.randint(1, 3)):
            at = rng.randrange(len(flipped))
            flipped[at] ^= 1 << rng.randrange(8)
        if bytes(flipped) != data:
            yield Case(o, f"flip#{n}", bytes(flipped))
    chunks = chunks_of(data, body)
    if len(chunks) > 1:
        yield Case(o, "swap01", data[:body] + chunks[1] + chunks[0] + b"".join(chunks[2:]))
        yield Case(o, "drop0", data[:body] + b"".join(chunks[1:]))
        yield Case(o, "drop-last", data[:body] + b"".join(chunks[:-1]))
        yield Case(o, "dup0", data[:body] + chunks[0] + b"".join(chunks))
    # Splices from a file of the same plaintext to the same key.
    yield Case(o, "splice-header", twin.data[:twin.body_offset] + data[body:])
    yield Case(o, "splice-nonce", data[:header_end] + twin.data[twin.body_offset - NONCE_LEN:])
    twin_chunks = chunks_of(twin.data, twin.body_offset)
    if len(chunks) > 1:
        yield Case(o, "splice-chunk1", data[:body] + chunks[0] + twin_chunks[1] + b"".join(chunks[2:]))


def armor_mutations(o: Original, rng: random.Random, long: bool) -> Iterator[Case]:
    data = o.data
    printable = [i for i, byte in enumerate(data) if byte not in b" \r\n\t"]
    for n in range(40 if long else 10):
        at = rng.choice(printable)
        replacement = rng.choice(b"ABab09+/=-\x00")
        if replacement != data[at]:
            yield Case(o, f"armor-char#{n}@{at}", data[:at] + bytes([replacement]) + data[at + 1:])
    newlines = [i for i, byte in enumerate(data) if byte == 0x0A]
    for i in newlines[1:-2][: 3 if not long else None]:
        yield Case(o, f"armor-join@{i}", data[:i] + data[i + 1:])
        yield Case(o, f"armor-split@{i - 10}", data[:i - 10] + b"\n" + data[i - 10:])
    end = data.rindex(b"-----END")
    for at in (end, end + 5, len(data) - 2, len(newlines) and newlines[1]):
        yield Case(o, f"armor-cut@{at}", data[:at])
    yield Case(o, "armor-trailing", data + b"x\n")


# ---- running one case ------------------------------------------------------------


def allowed_range(case: Case, offset: int, length: int) -> Optional[bytes]:
    """The original slice a range open of the damaged file may return, or
    None if it must fail (see the acceptance rule)."""
    o, data = case.original, case.data
    body = o.body_offset
    if len(data) < body or data[:body] != o.data[:body]:
        return None
    mine, theirs = chunks_of(data, body), chunks_of(o.data, body)
    if len(mine[-1]) < 16:
        return None
    plain_len = (len(mine) - 1) * CHUNK + len(mine[-1]) - 16
    begin = min(offset, plain_len)
    end = min(begin + length, plain_len)
    first, last = (begin // CHUNK, (end - 1) // CHUNK) if begin < end else (len(mine) - 1, len(mine) - 1)
    needed = set(range(first, last + 1))
    if end == plain_len:
        needed.add(len(mine) - 1)
    for i in needed:
        same_lastness = (i == len(mine) - 1) == (i == len(theirs) - 1)
        if i >= len(theirs) or mine[i] != theirs[i] or not same_lastness:
            return None
    return o.plain[begin:end]


def run_open(cli: Path, identity: Path, case: Case, mode: str, work: Path, rng_range) -> str:
    src = work / "in.age"
    out = work / "out"
    src.write_bytes(case.data)
    argv = [str(cli), "age", "-d", "-i", str(identity), "-o", str(out)]
    expected: Optional[bytes] = case.original.plain if case.control else None
    stdin = None
    if mode == "file":
        argv.append(str(src))
    elif mode == "pipe":
        stdin = case.data
    else:
        offset, length = rng_range
        argv += ["--offset", str(offset), "--length", str(length), str(src)]
        expected = allowed_range(case, offset, length)
    try:
        result = subprocess.run(argv, input=stdin, capture_output=True, timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return HUNG
    if result.returncode < 0 or result.returncode >= 128 or SANITIZER_REPORT.search(result.stderr):
        return CRASHED
    leftovers = sorted(p.name for p in work.iterdir() if p.name != "in.age")
    if result.returncode == 0:
        got = out.read_bytes()
        out.unlink()
        if expected is None or got != expected:
            return WRONGLY_ACCEPTED
        return ACCEPTED_CORRECTLY
    if leftovers:
        return LEFT_BEHIND
    if result.stdout or len(result.stderr.decode(errors="replace").strip().splitlines()) != 1:
        return ERROR_NOT_ONE_LINE
    return WRONGLY_REJECTED if case.control else REJECTED


# ---- setup and report -----------------------------------------------------------


def make_originals(cli: Path, work: Path, rng: random.Random, long: bool) -> tuple[Path, list[tuple[Original, Original]]]:
    identity = work / "key.txt"
    subprocess.run([str(cli), "age-keygen", "-o", str(identity)], check=True, capture_output=True)
    recipient = subprocess.run([str(cli), "age-keygen", "-y", str(identity)], check=True,
                               capture_output=True).stdout.decode().strip()
    age = shutil.which("age")
    pairs = []
    # Quick mode: both makers' binary files and one armored file of a few
    # chunks; --long adds the other armored file and the empty payload.
    for size in (3 * CHUNK + 1234, 0) if long else (3 * CHUNK + 1234,):
        plain = rng.randbytes(size)
        for maker in ("warpcrypt", "age") if age else ("warpcrypt",):
            for armored in (False, True) if long or maker == "warpcrypt" else (False,):
                argv = [str(cli), "age"] if maker == "warpcrypt" else [age]
                argv += ["-r", recipient] + (["-a"] if armored else [])
                made = [subprocess.run(argv, input=plain, check=True, capture_output=True).stdout for _ in range(2)]
                name = f"{maker}-{size}{'-armored' if armored else ''}"
                pairs.append((Original(name, made[0], plain, armored), Original(name, made[1], plain, armored)))
    return identity, pairs


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--long", action="store_true")
    parser.add_argument("--cli", type=Path, default=REPO_ROOT / "build" / "warpcrypt")
    parser.add_argument("--jobs", type=int, default=4)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    if not args.cli.is_file():
        print(f"age_mutations: no CLI at {args.cli}", file=sys.stderr)
        return 2
    rng = random.Random(args.seed)
    totals: Counter = Counter()
    examples: dict[str, list[str]] = {}
    with tempfile.TemporaryDirectory(prefix="age-mutations-") as scratch:
        root = Path(scratch)
        identity, pairs = make_originals(args.cli, root, rng, args.long)
        # One original's cases at a time: a long run's damaged files would
        # otherwise all sit in memory at once.
        for original, twin in pairs:
            cases = [Case(original, "control", original.data, control=True)]
            if original.armored:
                cases.extend(armor_mutations(original, rng, args.long))
            else:
                cases.extend(binary_mutations(original, twin, rng, args.long))
            jobs = []
            for case in cases:
                modes = ["file", "pipe"]
                if not case.original.armored:
                    plain_len = len(case.original.plain)
                    ranges = sorted({(0, 100), (max(0, plain_len - 50), 100)} |
                                    ({(CHUNK + 7, CHUNK)} if args.long else set()))
                    modes += [("range", r) for r in ranges]
                for mode in modes:
                    jobs.append((len(jobs), case, mode))

            def work(job):
                n, case, mode = job
                folder = root / f"open{n}"
                folder.mkdir()
                name = mode if isinstance(mode, str) else "range"
                outcome = run_open(args.cli, identity, case, name, folder, None if isinstance(mode, str) else mode[1])
                shutil.rmtree(folder)
                return case, name, outcome

            with ThreadPoolExecutor(args.jobs) as pool:
                for case, mode, outcome in pool.map(work, jobs):
                    totals[TRIED] += 1
                    totals[outcome] += 1
                    if outcome in PROBLEMS:
                        examples.setdefault(outcome, []).append(f"{case.original.name} {case.kind} ({mode})")
    report = {"totals": dict(totals), "problems": {p: totals[p] for p in PROBLEMS},
              "examples": {k: v[:10] for k, v in examples.items()}}
    print(f"age mutations (seed {args.seed}): " + ", ".join(f"{k} {totals[k]}" for k in
                                                             (TRIED, REJECTED, ACCEPTED_CORRECTLY, *PROBLEMS)))
    for problem, names in report["examples"].items():
        print(f"  {problem}: " + "; ".join(names))
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))
    return 1 if any(totals[p] for p in PROBLEMS) else 0


if __name__ == "__main__":
    sys.exit(main())
