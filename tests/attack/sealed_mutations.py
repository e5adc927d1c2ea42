#!/usr/bin/env python3
"""A seeded, deterministic mutation suite for sealed files (docs/format.md).

    .venv/bin/python tests/attack/sealed_mutations.py [--seed S] [--long] [--cli build/warpcrypt]
                                                      [--jobs N] [--json REPORT]

It seals a few small files with `warpcrypt seal` (4 KiB or 8 KiB chunks, a
handful of chunks plus a partial one, every AEAD, key files, and passphrases
through 1000 PBKDF2 iterations or Argon2id's cheapest costs), damages them in many ways and opens each
damaged file with `warpcrypt open` (and, for a seeded sample, with
`warpcrypt.open_file` in a child interpreter):

  truncate          cut at every chunk boundary (the header's end, each
                    chunk's start, the file's end) +-{0, 1, 15, 16, 17} bytes
  truncate+append   the same cuts followed by 1 byte, 16 bytes or a whole
                    fake chunk of arbitrary bytes
  header            every header field at its extremes (each magic byte,
                    version, AEAD id, chunk exponent 0/11/12/13/29/30/31/255,
                    tag length, key source, digest, reserved bytes (Argon2id's
                    lanes and memory in its file), iterations or passes
                    0/1/2^31/0xFFFFFFFF..., salt, nonce prefix)
  bit flip          1 to 3 random bits flipped across header and body
  random cut        a random cut, sometimes followed by random bytes
  reorder           chunks swapped, dropped, duplicated
  splice            chunks, or the header, taken from a second file sealed
                    from the same plaintext with the same secret

Each damaged file is opened whole three ways (-in FILE, stdin redirected
from the file, `cat FILE |` a real pipe) and over byte ranges (--offset /
--length, given the file as -in or as stdin): one range reaching the end of
the file and one near its start, or every range kind with --long. The unmodified
files go through all of these too, as controls that must succeed, so that a
broken harness (a wrong secret, say) cannot pass by rejecting everything.

Acceptance rule. Let O be the sealed original (plaintext P, chunk size C) and
M the damaged file. M's layout follows from its size alone, as a reader's
does (docs/format.md, "Reading"): n' = ceil(B / (C + 16)) chunks with B =
len(M) - 48, an impossible layout if B < 16 or the last chunk is shorter than
16 bytes. Chunk i of M is *intact* when M's header equals O's, chunk i's
bytes equal O's chunk i, and i is the last chunk of M exactly when it is the
last chunk of O: only then can its tag match (the header is the AAD and
derives the key, the nonce holds i and the last flag). An open of [a, a + L)
(a whole-file open is a = 0, L unbounded) returns P[a : e], e = min(a + L,
N'), N' being the plaintext length M's layout implies. It must authenticate
the chunks of M that hold those bytes and, when e = N' (the range reaches the
end: a whole-file open, no --length, a length running to or past the end, an
offset past the end), also M's last chunk: only its last flag proves that the
plaintext ends there, and the format says a reader opens it even for an empty
range past the end. The open may succeed only if M's layout is possible and
every one of those chunks is intact, and then its output must be exactly
P[a : e]. Any other success is *wrongly accepted*. Consequences: every
whole-file open of a damaged file must fail (some chunk, or the header,
differs), and so must every range reaching the end of a truncated or
extended file (its last chunk is not intact, e.g. an empty final chunk cut
from the next chunk's start); a range over untouched chunks that ends before
the end may succeed, with the original bytes. Rejecting such a range is not
counted: a reader may check more than it needs to. The controls (M = O) must
succeed with exactly the slice.

Per open it records: tried; rejected or accepted correctly (both fine);
wrongly accepted; wrongly rejected (a control that failed); crashed (killed
by a signal, an exit status >= 128, or a sanitizer report on stderr); hung
(no exit within 20 s); left behind (after a failure anything in the output
directory, the -out file or a `.NAME.warpcrypt-*` temporary; after a success
anything but the -out file; not looked for after a crash or a hang, which
no cleanup survives); error not one line (a rejection that does not
print exactly one line on stderr and nothing on stdout). It prints the
counts per category and per open mode, the first cases of each problem,
and exits 1 if any problem count is nonzero (2 if it cannot set up).

The sealed files get a fresh random salt and nonce prefix each run (the CLI
draws them), but everything the suite chooses (plaintexts, keys, which
mutations, positions, appended bytes, ranges, the Python sample) follows
from --seed, so a case name reproduces the same damage and a seed always
makes the same number of cases.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, NoReturn, Optional

from outcomes import (ACCEPTED_CORRECTLY, COLUMNS, CRASHED, ERROR_NOT_ONE_LINE, HUNG, LEFT_BEHIND,
                      PROBLEMS, REJECTED, SANITIZER_REPORT, TRIED, WRONGLY_ACCEPTED, WRONGLY_REJECTED)

REPO_ROOT = Path(__file__).resolve().parents[2]
HEADER_LEN = 48
TAG_LEN = 16
ITERATIONS = 1000  # PBKDF2 stays cheap; the format's default is 600,000
# Argon2id at its cheapest: one pass over 8 KiB (the default is 3 over 256 MiB).
ARGON2ID_COSTS = ("--kdf-ops", "1", "--kdf-memory", "8K")
TIMEOUT_S = 20
KEY_LENS = {"aes-128-gcm": 16, "aes-192-gcm": 24, "aes-256-gcm": 32, "chacha20-poly1305": 32}


# Run in a child interpreter so that a crash or hang inside the extension is
# counted like the CLI's instead of ending the suite. argv: SRC DST
# key|passphrase SECRET OFFSET LENGTH (LENGTH "" for "to the end"); the key
# is passed as the key file's path. sys.exit(str) prints one line, exits 1.
PYTHON_OPEN = """\
import sys
from pathlib import Path
import warpcrypt
src, dst, source, secret, offset, length = sys.argv[1:]
secrets = {"key": Path(secret).read_bytes()} if source == "key" else {"passphrase": secret}
try:
    warpcrypt.open_file(src, dst, offset=int(offset), length=int(length) if length else None, **secrets)
except warpcrypt.Error as exc:
    sys.exit(f"{type(exc).__name__}: {exc}")
"""


# ----------------------------------------------------------------------------
# The sealed originals
# ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Recipe:
    name: str
    aead: str
    uses_key_file: bool  # else a passphrase
    digest: Optional[str]  # PBKDF2's or HKDF's; None for a passphrase through Argon2id, which has none
    chunk_size: int
    plaintext_len: int

    @property
    def argon2id(self) -> bool:
        return not self.uses_key_file and self.digest is None


# Several chunks plus a partial one, an exact multiple, a single empty chunk,
# and 8 KiB chunks so that exponent 12 (4 KiB) is a mutation, not the original.
RECIPES = (
    Recipe("aes256-pass", "aes-256-gcm", False, "sha256", 4096, 4 * 4096 + 1000),
    Recipe("chacha-kfile", "chacha20-poly1305", True, "sha512", 4096, 3 * 4096),
    Recipe("aes128-kfile", "aes-128-gcm", True, "sha256", 4096, 5 * 4096 + 17),
    Recipe("aes192-pass-8k", "aes-192-gcm", False, "sha512", 8192, 3 * 8192 + 1),
    Recipe("chacha-pass-empty", "chacha20-poly1305", False, "sha256", 4096, 0),
    Recipe("aes256-argon2id", "aes-256-gcm", False, None, 4096, 2 * 4096 + 300),
)


@dataclass(frozen=True)
class Original:
    recipe: Recipe
    plaintext: bytes
    sealed: bytes
    sibling: bytes  # the same plaintext sealed again with the same secret: new salt, nonce prefix, key
    cli_secret: tuple[str, ...]
    python_secret: tuple[str, str]  # open_file's keyword ("key" or "passphrase") and the argument PYTHON_OPEN takes

    @property
    def chunk_size(self) -> int:
        return self.recipe.chunk_size

    @property
    def sealed_chunk(self) -> int:
        return self.recipe.chunk_size + TAG_LEN

    def chunks(self, sealed: bytes) -> list[bytes]:
        """A sealed file of this chunk size cut into its sealed chunks."""
        return [sealed[i:i + self.sealed_chunk] for i in range(HEADER_LEN, len(sealed), self.sealed_chunk)]


def seal_originals(cli: Path, seed: int, directory: Path) -> list[Original]:
    originals = []
    for recipe in RECIPES:
        rng = random.Random(f"{seed}/{recipe.name}/secret")
        plaintext = random.Random(f"{seed}/{recipe.name}/plaintext").randbytes(recipe.plaintext_len)
        (directory / f"{recipe.name}.plain").write_bytes(plaintext)
        if recipe.uses_key_file:
            key_path = directory / f"{recipe.name}.key"
            key_path.write_bytes(rng.randbytes(KEY_LENS[recipe.aead]))
            cli_secret = ("-kfile", str(key_path))
            python_secret = ("key", str(key_path))
        else:
            passphrase = f"mutation suite {rng.getrandbits(64):016x}"
            costs = ARGON2ID_COSTS if recipe.argon2id else ("-iter", str(ITERATIONS))
            cli_secret = ("-pass", f"pass:{passphrase}", *costs)
            python_secret = ("passphrase", passphrase)
        sealed, sibling = (seal(cli, recipe, cli_secret, directory, copy) for copy in ("sealed", "sibling"))
        # `open` takes the secret but not the KDF's costs (they are in the header).
        originals.append(Original(recipe, plaintext, sealed, sibling, cli_secret[:2], python_secret))
    return originals


def seal(cli: Path, recipe: Recipe, cli_secret: tuple[str, ...], directory: Path, copy: str) -> bytes:
    out = directory / f"{recipe.name}.{copy}"
    digest = ("-md", recipe.digest) if recipe.digest else ()
    argv = [str(cli), "seal", "-c", recipe.aead, *cli_secret, *digest, "--chunk-size", str(recipe.chunk_size), "-in", str(directory / f"{recipe.name}.plain"), "-out", str(out)]
    result = subprocess.run(argv, capture_output=True, timeout=TIMEOUT_S)
    if result.returncode != 0:
        fail_setup(f"sealing {recipe.name} failed (exit {result.returncode}): {result.stderr.decode(errors='replace')}")
    return out.read_bytes()


def fail_setup(message: str) -> NoReturn:
    print(f"sealed_mutations: {message}", file=sys.stderr)
    sys.exit(2)


# ----------------------------------------------------------------------------
# Mutations
# ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Mutation:
    category: str
    name: str
    data: bytes


@dataclass(frozen=True)
class Budget:
    """How much random work a mode does."""

    bit_flips: int  # random bit-flip mutations per original
    random_cuts: int  # random truncations per original
    every_range: bool  # every range kind per mutation, not one reaching the end and one near the start
    python_share: float  # the share of mutations also opened through warpcrypt.open_file


QUICK = Budget(bit_flips=24, random_cuts=12, every_range=False, python_share=0.05)
LONG = Budget(bit_flips=600, random_cuts=300, every_range=True, python_share=0.25)


def replaced(data: bytes, offset: int, new: bytes) -> bytes:
    return data[:offset] + new + data[offset + len(new):]


def cut_points(original: Original) -> Iterator[tuple[str, int]]:
    """Every chunk boundary +-{0, 1, 15, 16, 17}, within the file."""
    sealed = original.sealed
    boundaries = [(f"chunk {i} start", HEADER_LEN + i * original.sealed_chunk)
                  for i in range(len(original.chunks(sealed)))]
    boundaries.append(("end", len(sealed)))
    for label, boundary in boundaries:
        for delta in (-17, -16, -15, -1, 0, 1, 15, 16, 17):
            if 0 <= boundary + delta <= len(sealed):
                yield f"{label} {delta:+d}", boundary + delta


def truncations(original: Original) -> Iterator[tuple[str, bytes]]:
    for label, cut in cut_points(original):
        yield f"cut at {label}", original.sealed[:cut]


def arbitrary_bytes(sealed: bytes, at: int, length: int, rng: random.Random) -> bytes:
    """`length` arbitrary bytes to write at offset `at`. Where they fall
    inside the file they are its bytes XOR a seeded mask whose first byte is
    not zero, so they never rebuild the original, and whether two mutations
    coincide (and so the number of cases) depends on the seed alone, not on
    the salt the CLI drew."""
    if length == 0:
        return b""
    mask = bytes([rng.randrange(1, 256)]) + rng.randbytes(length - 1)
    inside = sealed[at:at + length]
    return bytes(a ^ b for a, b in zip(inside, mask)) + mask[len(inside):]


def truncations_with_appends(original: Original, rng: random.Random) -> Iterator[tuple[str, bytes]]:
    # 16 bytes is exactly an empty chunk's size; a fake chunk fills a whole slot.
    appendix_lens = {"1 byte": 1, "16 bytes": TAG_LEN, "a fake chunk": original.sealed_chunk}
    for label, cut in cut_points(original):
        for appendix, length in appendix_lens.items():
            appended = arbitrary_bytes(original.sealed, cut, length, rng)
            yield f"cut at {label}, then {appendix}", original.sealed[:cut] + appended


# One-byte header fields: (name, offset, values to try). The valid values
# are among them on purpose: another AEAD, key source or digest than the
# file's must not authenticate either.
ONE_BYTE_FIELDS = (
    ("version", 8, (0, 2, 255)),
    ("aead", 9, (0, 1, 2, 3, 4, 5, 255)),
    ("chunk exponent", 10, (0, 11, 12, 13, 29, 30, 31, 255)),
    ("tag length", 11, (0, 1, 15, 17, 32, 255)),
    ("key source", 12, (0, 1, 2, 3, 255)),
    ("digest", 13, (0, 1, 2, 3, 255)),
)
# Counts above open's default limit (2,000,000) must fail before PBKDF2
# runs: 100,000,000 once cost over a minute per open, which the hang timer
# would catch.
ITERATION_COUNTS = (0, 1, ITERATIONS - 1, 2_000_001, 100_000_000, 100_000_001, 1 << 31, 0xFFFFFFFF)
RESERVED_OFFSETS = (14, 15, 43, 44, 45, 46, 47)


def header_mutations(original: Original) -> Iterator[tuple[str, bytes]]:
    sealed = original.sealed
    for i in range(8):
        # 0x20 swaps an ASCII letter's case: "WARPSEAL" -> "wARPSEAL".
        for value in (0x00, 0xFF, sealed[i] ^ 0x20):
            yield f"magic[{i}] = {value:#04x}", replaced(sealed, i, bytes([value]))
    for field, offset, values in ONE_BYTE_FIELDS:
        for value in values:
            yield f"{field} = {value}", replaced(sealed, offset, bytes([value]))
    for count in ITERATION_COUNTS:
        yield f"iterations = {count}", replaced(sealed, 16, count.to_bytes(4, "big"))
    for field, offset, size in (("salt", 20, 16), ("nonce prefix", 36, 7)):
        value = sealed[offset:offset + size]
        variants = {
            "zeros": bytes(size),
            "0xff bytes": b"\xff" * size,
            "first bit flipped": bytes([value[0] ^ 0x01]) + value[1:],
            "last bit flipped": value[:-1] + bytes([value[-1] ^ 0x80]),
        }
        for label, new in variants.items():
            yield f"{field} {label}", replaced(sealed, offset, new)
    for offset in RESERVED_OFFSETS:
        for value in (0x01, 0x80, 0xFF):
            yield f"reserved byte {offset} = {value:#04x}", replaced(sealed, offset, bytes([value]))


def bit_flips(original: Original, count: int, rng: random.Random) -> Iterator[tuple[str, bytes]]:
    sealed = original.sealed
    for _ in range(count):
        damaged = bytearray(sealed)
        flipped = []
        for _ in range(rng.choice((1, 1, 1, 2, 3))):
            # A quarter of the flips land in the header: uniform positions
            # would hit its 48 bytes once in hundreds.
            offset = rng.randrange(HEADER_LEN) if rng.random() < 0.25 else rng.randrange(HEADER_LEN, len(sealed))
            bit = rng.randrange(8)
            damaged[offset] ^= 1 << bit
            flipped.append(f"{offset}.{bit}")
        yield f"bits {', '.join(flipped)} flipped", bytes(damaged)


def random_cuts(original: Original, count: int, rng: random.Random) -> Iterator[tuple[str, bytes]]:
    sealed = original.sealed
    for _ in range(count):
        cut = rng.randrange(len(sealed))
        appended = rng.choice((0, 0, rng.randrange(1, 2 * TAG_LEN + 1), original.sealed_chunk))
        yield f"cut at {cut}, then {appended} bytes", sealed[:cut] + arbitrary_bytes(sealed, cut, appended, rng)


def chunk_reorders(original: Original) -> Iterator[tuple[str, bytes]]:
    header, chunks = original.sealed[:HEADER_LEN], original.chunks(original.sealed)
    last = len(chunks) - 1

    def assembled(order: list[int]) -> bytes:
        return header + b"".join(chunks[i] for i in order)

    for i in range(last):
        order = list(range(len(chunks)))
        order[i], order[i + 1] = order[i + 1], order[i]
        yield f"chunks {i} and {i + 1} swapped", assembled(order)
    if last > 1:
        yield f"chunks 0 and {last} swapped", assembled([last, *range(1, last), 0])
    for i in range(len(chunks)):
        yield f"chunk {i} dropped", assembled([j for j in range(len(chunks)) if j != i])
        yield f"chunk {i} duplicated", assembled([*range(i + 1), *range(i, len(chunks))])
    yield "last chunk appended again", assembled([*range(len(chunks)), last])


def splices(original: Original) -> Iterator[tuple[str, bytes]]:
    """Pieces of the sibling: same secret, same plaintext, another salt."""
    header, mine = original.sealed[:HEADER_LEN], original.chunks(original.sealed)
    theirs = original.chunks(original.sibling)
    for i in range(len(mine)):
        yield f"chunk {i} from the sibling", header + b"".join(mine[:i] + [theirs[i]] + mine[i + 1:])
    yield "the sibling's header", original.sibling[:HEADER_LEN] + b"".join(mine)
    yield "every chunk from the sibling", header + b"".join(theirs)
    yield "the sibling's last chunk appended", original.sealed + theirs[-1]


def mutations_of(original: Original, budget: Budget, seed: int) -> Iterator[Mutation]:
    def rng(category: str) -> random.Random:
        # One stream per category, so adding mutations to one leaves the others as they were.
        return random.Random(f"{seed}/{original.recipe.name}/{category}")

    sources = (
        ("truncate", truncations(original)),
        ("truncate+append", truncations_with_appends(original, rng("truncate+append"))),
        ("header", header_mutations(original)),
        ("bit flip", bit_flips(original, budget.bit_flips, rng("bit flip"))),
        ("random cut", random_cuts(original, budget.random_cuts, rng("random cut"))),
        ("reorder", chunk_reorders(original)),
        ("splice", splices(original)),
    )
    # A "mutation" equal to the original (a cut at the end, a field set to
    # its own value) or to an earlier one would only repeat work.
    seen = {original.sealed}
    for category, generated in sources:
        for name, data in generated:
            if data not in seen:
                seen.add(data)
                yield Mutation(category, f"{original.recipe.name}: {name}", data)


# ----------------------------------------------------------------------------
# The acceptance rule (see the top of the file)
# ----------------------------------------------------------------------------


def chunk_spans(file_len: int, chunk_size: int) -> Optional[list[tuple[int, int]]]:
    """Where a reader finds each sealed chunk in a file of this size, or None
    when no sealed file has this size."""
    body, sealed_chunk = file_len - HEADER_LEN, chunk_size + TAG_LEN
    if body < TAG_LEN:
        return None
    count = -(-body // sealed_chunk)
    if body - (count - 1) * sealed_chunk < TAG_LEN:
        return None
    return [(HEADER_LEN + i * sealed_chunk, min(HEADER_LEN + (i + 1) * sealed_chunk, file_len)) for i in range(count)]


def plaintext_len(spans: list[tuple[int, int]]) -> int:
    return sum(stop - start - TAG_LEN for start, stop in spans)


def implied_plaintext_len(original: Original, data: bytes) -> int:
    """The plaintext length a reader infers from the file's size (the
    original's, for a size no sealed file can have)."""
    return plaintext_len(chunk_spans(len(data), original.chunk_size) or
                         chunk_spans(len(original.sealed), original.chunk_size))


def permitted_output(original: Original, data: bytes, offset: int, length: Optional[int]) -> Optional[bytes]:
    """The only output an open of [offset, offset + length) may succeed
    with, or None when it must fail."""
    spans = chunk_spans(len(data), original.chunk_size)
    if spans is None or data[:HEADER_LEN] != original.sealed[:HEADER_LEN]:
        return None
    original_spans = chunk_spans(len(original.sealed), original.chunk_size)
    total = plaintext_len(spans)
    end = total if length is None else min(offset + length, total)
    needed = set(range(offset // original.chunk_size, -(-end // original.chunk_size))) if offset < end else set()
    if end == total:
        # Only the last chunk's flag proves where the plaintext ends (it may
        # hold no byte of the range, or none at all: an empty final chunk).
        needed.add(len(spans) - 1)

    def intact(i: int) -> bool:
        if i >= len(original_spans):
            return False
        (start, stop), (original_start, original_stop) = spans[i], original_spans[i]
        same_position = (i == len(spans) - 1) == (i == len(original_spans) - 1)
        return same_position and data[start:stop] == original.sealed[original_start:original_stop]

    if not all(intact(i) for i in needed):
        return None
    return original.plaintext[offset:end]


# ----------------------------------------------------------------------------
# Opens
# ----------------------------------------------------------------------------

CLI_FILE, CLI_STDIN, CLI_PIPE, PYTHON = "cli -in FILE", "cli <FILE", "cli cat FILE |", "python open_file"


@dataclass(frozen=True)
class Open:
    via: str  # CLI_FILE, CLI_STDIN, CLI_PIPE or PYTHON
    offset: Optional[int] = None  # None and None: the whole file
    length: Optional[int] = None

    @property
    def ranged(self) -> bool:
        return self.offset is not None or self.length is not None

    @property
    def mode(self) -> str:
        return f"{self.via}, {'range' if self.ranged else 'whole file'}"

    def __str__(self) -> str:
        words = [self.via]
        if self.offset is not None:
            words.append(f"--offset {self.offset}")
        if self.length is not None:
            words.append(f"--length {self.length}")
        return " ".join(words)


Range = tuple[int, Optional[int]]  # (offset, length); length None: to the end


def range_kinds(total: int, chunk_size: int) -> tuple[list[Range], list[Range]]:
    """(ranges reaching the end of a plaintext of `total` bytes, ranges near
    its start, which end before the end where there are three chunks or more)."""
    last_two_chunks = max(0, total - chunk_size - 5)
    reaching_end = [
        (max(0, total - 10), None),  # the tail, no --length
        (last_two_chunks, total - last_two_chunks),  # a --length ending exactly at the end
        (total, None),  # empty, at the end: the last chunk is still opened
        (1 << 40, 1),  # far past the end: likewise
    ]
    inside = [
        (0, chunk_size),  # the first chunk
        (chunk_size + chunk_size // 2, chunk_size),  # across chunks 1 and 2
    ]
    return reaching_end, inside


def opens_for(original: Original, data: bytes, budget: Budget, rng: random.Random, is_control: bool) -> list[Open]:
    """Whole-file opens through every input, plus ranges given as -in or
    stdin (a pipe cannot seek, so the CLI refuses ranges on it)."""
    reaching_end, inside = range_kinds(implied_plaintext_len(original, data), original.chunk_size)
    opens = [Open(CLI_FILE), Open(CLI_STDIN), Open(CLI_PIPE)]
    if is_control or budget.every_range:
        ranges = reaching_end + inside
    else:
        ranges = [rng.choice(reaching_end), rng.choice(inside)]
    vias = (CLI_FILE, CLI_STDIN) if is_control else (rng.choice((CLI_FILE, CLI_STDIN)),)
    opens += [Open(via, offset, length) for offset, length in ranges for via in vias]
    if is_control:
        opens += [Open(PYTHON)] + [Open(PYTHON, offset, length) for offset, length in ranges]
    elif rng.random() < budget.python_share:
        opens += [Open(PYTHON), Open(PYTHON, *rng.choice(reaching_end))]
    return opens


@dataclass(frozen=True)
class Case:
    index: int
    category: str
    name: str
    original: Original
    data: bytes
    open: Open
    must_succeed: bool  # a control
    permitted: Optional[bytes]  # the one output a success may have; None: must fail


@dataclass(frozen=True)
class Verdict:
    case: Case
    outcome: str  # REJECTED, ACCEPTED_CORRECTLY, WRONGLY_ACCEPTED, WRONGLY_REJECTED, CRASHED or HUNG
    flaws: tuple[str, ...]  # LEFT_BEHIND, ERROR_NOT_ONE_LINE
    detail: str


def build_cases(originals: list[Original], budget: Budget, seed: int) -> Iterator[Case]:
    index = 0
    for original in originals:
        control = Mutation("control (unmodified)", f"{original.recipe.name}: original", original.sealed)
        for mutation in [control, *mutations_of(original, budget, seed)]:
            is_control = mutation is control
            # Each mutation draws its own ranges, so one more or less leaves the others' alone.
            rng = random.Random(f"{seed}/{mutation.name}/opens")
            for how in opens_for(original, mutation.data, budget, rng, is_control):
                offset = how.offset or 0
                permitted = permitted_output(original, mutation.data, offset, how.length)
                yield Case(index, mutation.category, mutation.name, original, mutation.data, how, is_control, permitted)
                index += 1


OUTPUT_NAME = "plain.bin"


def run_case(case: Case, cli: Path, scratch: Path) -> Verdict:
    directory = scratch / f"case-{case.index}"
    out_dir = directory / "out"
    out_dir.mkdir(parents=True)
    try:
        src = directory / "sealed.wcs"
        src.write_bytes(case.data)
        returncode, stdout, stderr = run_open(case, cli, src, out_dir / OUTPUT_NAME)
        output = (out_dir / OUTPUT_NAME).read_bytes() if (out_dir / OUTPUT_NAME).is_file() else None
        leftovers = sorted(p.name for p in out_dir.iterdir() if returncode != 0 or p.name != OUTPUT_NAME)
    finally:
        shutil.rmtree(directory)
    return judge(case, returncode, stdout, stderr, output, leftovers)


def run_open(case: Case, cli: Path, src: Path, dst: Path) -> tuple[Optional[int], bytes, bytes]:
    """(exit status or None after a timeout, stdout, stderr)."""
    how = case.open
    if how.via == PYTHON:
        source, secret = case.original.python_secret
        length = "" if how.length is None else str(how.length)
        argv = [sys.executable, "-c", PYTHON_OPEN, str(src), str(dst), source, secret, str(how.offset or 0), length]
        return run_process(argv, stdin=subprocess.DEVNULL)
    argv = [str(cli), "open", *case.original.cli_secret, "-out", str(dst)]
    argv += ["--offset", str(how.offset)] if how.offset is not None else []
    argv += ["--length", str(how.length)] if how.length is not None else []
    if how.via == CLI_FILE:
        return run_process([*argv, "-in", str(src)], stdin=subprocess.DEVNULL)
    if how.via == CLI_STDIN:
        with open(src, "rb") as stdin:
            return run_process(argv, stdin=stdin)
    with subprocess.Popen(["cat", str(src)], stdout=subprocess.PIPE) as cat:
        # Leaving the block closes our copy of the read end before waiting,
        # so a cat that warpcrypt stopped reading from dies of SIGPIPE.
        return run_process(argv, stdin=cat.stdout)


def run_process(argv: list[str], stdin) -> tuple[Optional[int], bytes, bytes]:
    try:
        result = subprocess.run(argv, stdin=stdin, capture_output=True, timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired as timeout:  # run() has killed it
        return None, timeout.stdout or b"", timeout.stderr or b""
    return result.returncode, result.stdout, result.stderr


def judge(case: Case, returncode: Optional[int], stdout: bytes, stderr: bytes, output: Optional[bytes],
          leftovers: list[str]) -> Verdict:
    stderr_lines = stderr.decode(errors="replace").splitlines()
    detail = f"exit {returncode}: {next((line for line in stderr_lines if line.strip()), '(nothing on stderr)')}"
    if returncode is None:
        return Verdict(case, HUNG, (), f"no exit within {TIMEOUT_S} s")
    if returncode < 0 or returncode >= 128 or SANITIZER_REPORT.search(stderr):
        return Verdict(case, CRASHED, (), detail)
    flaws = (LEFT_BEHIND,) if leftovers else ()
    if leftovers:
        detail += f"; left behind {leftovers}"
    if returncode == 0:
        if case.permitted is None or output != case.permitted:
            expected = "a failure" if case.permitted is None else f"{len(case.permitted)} original bytes"
            got = "no output file" if output is None else f"{len(output)} bytes"
            return Verdict(case, WRONGLY_ACCEPTED, flaws, f"exit 0 with {got}, expected {expected}")
        return Verdict(case, ACCEPTED_CORRECTLY, flaws, detail)
    if len(stderr_lines) != 1 or not stderr_lines[0].strip() or stdout:
        flaws += (ERROR_NOT_ONE_LINE,)
        detail += f"; stderr {stderr[:300]!r}, {len(stdout)} bytes on stdout"
    return Verdict(case, WRONGLY_REJECTED if case.must_succeed else REJECTED, flaws, detail)


# ----------------------------------------------------------------------------
# Report
# ----------------------------------------------------------------------------


def tally(verdicts: list[Verdict], key) -> dict[str, Counter]:
    counts: dict[str, Counter] = defaultdict(Counter)
    for verdict in verdicts:
        row = counts[key(verdict.case)]
        row[TRIED] += 1
        row[verdict.outcome] += 1
        row.update(verdict.flaws)
    return counts


def print_table(title: str, rows: dict[str, Counter]) -> None:
    width = max(len(title), *(len(name) for name in rows))
    print(f"{title:<{width}}  " + "  ".join(COLUMNS))
    for name, row in rows.items():
        print(f"{name:<{width}}  " + "  ".join(f"{row[column]:>{len(column)}}" for column in COLUMNS))
    print()


def print_report(verdicts: list[Verdict], totals: Counter, examples_per_problem: int) -> None:
    print_table("category", tally(verdicts, lambda case: case.category))
    print_table("open mode", tally(verdicts, lambda case: case.open.mode))
    print("totals: " + ", ".join(f"{column} {totals[column]}" for column in COLUMNS))
    for problem in PROBLEMS:
        hits = [v for v in verdicts if problem in (v.outcome, *v.flaws)]
        if hits:
            print(f"\n{problem}: {len(hits)} (the first {min(len(hits), examples_per_problem)})")
            for verdict in hits[:examples_per_problem]:
                case = verdict.case
                print(f"  [{case.category}] {case.name} | {case.open} | {verdict.detail}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=1, help="chooses plaintexts, keys and mutations (default 1)")
    parser.add_argument("--long", action="store_true", help="many more random mutations, every range kind")
    parser.add_argument("--cli", type=Path, default=REPO_ROOT / "build" / "warpcrypt", help="the warpcrypt binary")
    parser.add_argument("--jobs", type=int, default=2, help="opens run at once (default 2)")
    parser.add_argument("--json", type=Path, help="also write the counts to this file")
    parser.add_argument("--examples", type=int, default=15, help="cases listed per problem (default 15)")
    args = parser.parse_args()
    cli = args.cli.resolve()
    if not (cli.is_file() and os.access(cli, os.X_OK)):
        fail_setup(f"no executable warpcrypt at {cli} (build it, or pass --cli)")

    started = time.monotonic()
    budget = LONG if args.long else QUICK
    with tempfile.TemporaryDirectory(prefix="warpcrypt-mutations-") as tmp:
        originals_dir, scratch = Path(tmp, "originals"), Path(tmp, "cases")
        originals_dir.mkdir()
        scratch.mkdir()
        originals = seal_originals(cli, args.seed, originals_dir)
        cases = list(build_cases(originals, budget, args.seed))
        print(f"{len(cases)} opens of {len(originals)} sealed files and their mutations, "
              f"{'long' if args.long else 'quick'} mode, seed {args.seed}, {args.jobs} workers, {cli}\n")
        with ThreadPoolExecutor(max_workers=args.jobs) as pool:
            verdicts = list(pool.map(lambda case: run_case(case, cli, scratch), cases))
    elapsed = time.monotonic() - started

    totals = tally(verdicts, lambda case: "all")["all"]
    print_report(verdicts, totals, args.examples)
    problems = {problem: totals[problem] for problem in PROBLEMS}
    print(f"\n{elapsed:.1f} s; " + ("no problems" if not any(problems.values()) else "PROBLEMS FOUND"))
    if args.json:
        report = {
            "seed": args.seed,
            "long": args.long,
            "elapsed_s": round(elapsed, 1),
            "totals": {column: totals[column] for column in COLUMNS},
            "problems": problems,
            "by_category": {name: dict(row) for name, row in tally(verdicts, lambda case: case.category).items()},
        }
        args.json.write_text(json.dumps(report, indent=2) + "\n")
    return 1 if any(problems.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
