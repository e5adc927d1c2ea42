"""Plain helpers shared by the CLI tests: the cipher table, process runners,
directory snapshots and a Salsa20 reference.

Fixtures that wire these together live in conftest.py; this module holds
what test modules need at import time (parametrize tables) and what has no
pytest state.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import hashlib
import itertools
import json
import os
import random
import re
import shutil
import stat
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Sequence

import pytest

# --------------------------------------------------------------------------
# Ciphers
# --------------------------------------------------------------------------

AES_MODES = ("ecb", "cbc", "cfb", "cfb8", "ofb", "ctr")
BLOCK = 16


@dataclass(frozen=True)
class Cipher:
    name: str
    key_len: int
    iv_len: int
    padded: bool  # PKCS#7 padding by default (ECB, CBC)
    in_openssl: bool = True
    # Runs on the GPU for one message in both directions (the design: CBC and
    # CFB encryption, CFB8 and OFB stay on the CPU).
    gpu_capable: bool = False

    def __str__(self) -> str:
        return self.name

    @property
    def flag(self) -> str:
        return f"-{self.name}"

    def ciphertext_len(self, plaintext_len: int, *, nopad: bool = False) -> int:
        if self.padded and not nopad:
            return (plaintext_len // BLOCK + 1) * BLOCK
        return plaintext_len


SHARED_CIPHERS: tuple[Cipher, ...] = tuple(
    Cipher(
        name=f"aes-{bits}-{mode}",
        key_len=bits // 8,
        iv_len=0 if mode == "ecb" else BLOCK,
        padded=mode in ("ecb", "cbc"),
        gpu_capable=mode in ("ecb", "ctr"),
    )
    for bits in (128, 192, 256)
    for mode in AES_MODES
) + (Cipher("chacha20", 32, 16, padded=False, gpu_capable=True),)

WARPCRYPT_ONLY_CIPHERS: tuple[Cipher, ...] = (
    Cipher("salsa20", 32, 8, padded=False, in_openssl=False, gpu_capable=True),
    Cipher("salsa20-128", 16, 8, padded=False, in_openssl=False, gpu_capable=True),
)

ALL_CIPHERS = SHARED_CIPHERS + WARPCRYPT_ONLY_CIPHERS
PADDED_CIPHERS = tuple(c for c in SHARED_CIPHERS if c.padded)
GPU_CAPABLE_CIPHERS = tuple(c for c in ALL_CIPHERS if c.gpu_capable)


def cipher(name: str) -> Cipher:
    return next(c for c in ALL_CIPHERS if c.name == name)


MIB = 1 << 20
# age's payload chunk: 64 KiB of plaintext.
AGE_CHUNK = 64 * 1024


def reference_age() -> tuple[str, str]:
    """The reference `age` and `age-keygen` on PATH, which the age tests
    compare against; without them the calling test module fails, never
    skips."""
    age, keygen = shutil.which("age"), shutil.which("age-keygen")
    if age is None or keygen is None:
        pytest.fail("the reference `age` and `age-keygen` are not on PATH (scripts/install-deps.sh installs them)",
                    pytrace=False)
    return age, keygen

INTEROP_SIZES = (0, 1, 15, 16, 17, 4096, MIB + 3)


def size_id(size: int) -> str:
    return f"{size // MIB}MiB+{size % MIB}" if size >= MIB else f"{size}B"


def raw_key_args(c: Cipher, key: bytes, iv: bytes | None = None) -> list[str]:
    args = ["-K", key.hex()]
    if c.iv_len:
        assert iv is not None and len(iv) == c.iv_len
        args += ["-iv", iv.hex()]
    return args


# --------------------------------------------------------------------------
# Data
# --------------------------------------------------------------------------


def random_bytes(n: int, seed: object) -> bytes:
    """Deterministic pseudo-random bytes, so a failure reproduces exactly."""
    return random.Random(str(seed)).randbytes(n)


def xor_bytes(a: bytes, b: bytes) -> bytes:
    assert len(a) == len(b)
    return (int.from_bytes(a, "big") ^ int.from_bytes(b, "big")).to_bytes(len(a), "big")


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def describe_mismatch(actual: bytes, expected: bytes) -> str:
    """A short account of how two byte strings differ (pytest's own diff of
    megabyte strings is unreadable and slow)."""
    if actual == expected:
        return "identical"
    first = next(
        (i for i, (a, b) in enumerate(zip(actual, expected)) if a != b),
        min(len(actual), len(expected)),
    )
    lo = max(0, first - 8)
    return (
        f"got {len(actual)} bytes, expected {len(expected)}; first difference at "
        f"offset {first}: got {actual[lo:first + 16].hex()} "
        f"expected {expected[lo:first + 16].hex()} (from offset {lo})"
    )


def assert_same_bytes(actual: bytes, expected: bytes, what: str) -> None:
    assert actual == expected, f"{what}: {describe_mismatch(actual, expected)}"


# --------------------------------------------------------------------------
# Running a command
# --------------------------------------------------------------------------

TIMEOUT_S = 120


@dataclass(frozen=True)
class Run:
    argv: tuple[str, ...]
    returncode: int
    stdout: bytes
    stderr: bytes

    @property
    def stderr_text(self) -> str:
        return self.stderr.decode("utf-8", errors="replace")

    @property
    def stderr_lines(self) -> list[str]:
        return [line for line in self.stderr_text.splitlines() if line.strip()]

    def describe(self) -> str:
        return (
            f"$ {' '.join(self.argv)}\n-> exit {self.returncode}\n"
            f"stderr: {self.stderr_text!r}\nstdout: {self.stdout[:200]!r}"
            f"{'...' if len(self.stdout) > 200 else ''}"
        )

    def check(self) -> "Run":
        assert self.returncode == 0, f"command failed:\n{self.describe()}"
        return self


@dataclass
class Tool:
    """One command-line program (warpcrypt or openssl).

    `tool(*args)` runs it and returns a Run; `tool.enc(data, *args)` runs
    `enc args -in FILE -out FILE` over `data` and returns the output bytes.
    """

    argv0: tuple[str, ...]
    scratch: Path
    _serial: itertools.count = field(default_factory=itertools.count)

    def __call__(
        self,
        *args: str,
        stdin: bytes | None = None,
        env: Mapping[str, str] | None = None,
        pass_fds: Sequence[int] = (),
        cwd: Path | None = None,
    ) -> Run:
        argv = (*self.argv0, *map(str, args))
        full_env = dict(os.environ)
        if env:
            full_env.update(env)
        proc = subprocess.run(
            argv,
            input=stdin,
            stdin=subprocess.DEVNULL if stdin is None else None,
            capture_output=True,
            env=full_env,
            pass_fds=tuple(pass_fds),
            cwd=cwd,
            timeout=TIMEOUT_S,
            # No controlling terminal, wherever the tests run: a command
            # given no key asks on /dev/tty, and must fail here instead.
            start_new_session=True,
        )
        return Run(argv, proc.returncode, proc.stdout, proc.stderr)

    def enc(self, data: bytes, *args: str, **kwargs) -> bytes:
        """`enc args` over files; asserts success and returns the output.

        The files are removed afterwards: the matrix pushes megabytes through
        here and pytest keeps old temporary directories around.
        """
        n = next(self._serial)
        src = self.scratch / f"in-{n}.bin"
        dst = self.scratch / f"out-{n}.bin"
        src.write_bytes(data)
        try:
            self("enc", *args, "-in", src, "-out", dst, **kwargs).check()
            return dst.read_bytes()
        finally:
            src.unlink(missing_ok=True)
            dst.unlink(missing_ok=True)


# --------------------------------------------------------------------------
# Directory snapshots: proof that a failed command left nothing behind
# --------------------------------------------------------------------------


def snapshot(directory: Path) -> dict[str, tuple]:
    """Every entry under `directory`, with what it is and, for files, the
    content hash and mtime (so a file rewritten with equal bytes shows up)."""
    entries: dict[str, tuple] = {}
    for root, dirs, files in os.walk(directory):
        for name in dirs + files:
            path = Path(root, name)
            rel = str(path.relative_to(directory))
            st = path.lstat()
            if stat.S_ISLNK(st.st_mode):
                entries[rel] = ("symlink", os.readlink(path))
            elif stat.S_ISDIR(st.st_mode):
                entries[rel] = ("dir", stat.S_IMODE(st.st_mode))
            elif stat.S_ISREG(st.st_mode):
                entries[rel] = (
                    "file",
                    stat.S_IMODE(st.st_mode),
                    st.st_size,
                    st.st_mtime_ns,
                    sha256(path.read_bytes()) if os.access(path, os.R_OK) else None,
                )
            else:
                entries[rel] = ("special", stat.S_IFMT(st.st_mode))
    return entries


def assert_no_stray_files(directory: Path, before: dict[str, tuple]) -> None:
    after = snapshot(directory)
    added = sorted(set(after) - set(before))
    removed = sorted(set(before) - set(after))
    changed = sorted(k for k in set(before) & set(after) if before[k] != after[k])
    assert not (added or removed or changed), (
        f"{directory} changed: added {added}, removed {removed}, "
        f"modified {[(k, before[k], after[k]) for k in changed]}"
    )


# --------------------------------------------------------------------------
# Salsa20 reference (libsodium through ctypes)
# --------------------------------------------------------------------------


class Sodium:
    """Salsa20 keystreams from libsodium.

    32-byte keys use crypto_stream_salsa20_xor_ic. libsodium has no 16-byte
    key stream call, so salsa20-128 is built from crypto_core_salsa20 with
    djb's "expand 16-byte k" constant and the key repeated, which is exactly
    the spec's k0 = k1 expansion.
    """

    SIGMA16 = b"expand 16-byte k"

    def __init__(self) -> None:
        names = ["libsodium.so.23", ctypes.util.find_library("sodium")]
        for name in filter(None, names):
            try:
                self.lib = ctypes.CDLL(name)
                break
            except OSError:
                continue
        else:
            raise RuntimeError("libsodium not found (tried libsodium.so.23 and find_library)")
        if self.lib.sodium_init() < 0:
            raise RuntimeError("sodium_init failed")

    def xor(self, key: bytes, nonce: bytes, data: bytes, counter: int = 0) -> bytes:
        assert len(nonce) == 8
        if len(key) == 32:
            out = ctypes.create_string_buffer(max(len(data), 1))
            rc = self.lib.crypto_stream_salsa20_xor_ic(
                out, data, ctypes.c_ulonglong(len(data)), nonce, ctypes.c_uint64(counter), key
            )
            assert rc == 0
            return out.raw[: len(data)]
        assert len(key) == 16
        stream = b"".join(
            self.core(key, nonce, counter + i) for i in range((len(data) + 63) // 64)
        )
        return xor_bytes(data, stream[: len(data)])

    def core(self, key16: bytes, nonce: bytes, counter: int) -> bytes:
        """One 64-byte Salsa20 block for a 16-byte key."""
        out = ctypes.create_string_buffer(64)
        block_in = nonce + (counter % (1 << 64)).to_bytes(8, "little")
        rc = self.lib.crypto_core_salsa20(out, block_in, key16 + key16, self.SIGMA16)
        assert rc == 0
        return out.raw


def run_mutation_suite(suite: Path, binary: Path, scratch: Path, timeout_s: float, min_opens: int) -> None:
    """Runs `suite` (tests/attack/*_mutations.py) in quick mode against the
    CLI `binary` and checks what every suite must show: a report, at least
    `min_opens` opens (fewer means cases were lost), some of them accepted
    (the unmodified files and their ranges), no problem of any kind, and a
    clean exit. Failures quote everything the suite printed."""
    report_path = scratch / "report.json"
    result = subprocess.run([sys.executable, str(suite), "--cli", str(binary), "--json", str(report_path)],
                            capture_output=True, text=True, timeout=timeout_s)
    printed = f"{result.stdout}\n{result.stderr}"
    assert report_path.is_file(), f"the suite stopped before writing its report (exit {result.returncode}):\n{printed}"
    report = json.loads(report_path.read_text())
    totals = report["totals"]
    assert totals["tried"] >= min_opens, f"only {totals['tried']} opens ran:\n{printed}"
    assert totals.get("accepted correctly", 0) > 0, f"no control or range succeeded:\n{printed}"
    found = {problem: count for problem, count in report["problems"].items() if count}
    assert not found, f"problems {found}:\n{printed}"
    assert result.returncode == 0, printed


def run_argv(argv, stdin: bytes | None = None, check: bool = True) -> subprocess.CompletedProcess:
    """Runs `argv` (paths taken as they are) and, with `check`, asserts it
    succeeded, its stderr shown where not."""
    result = subprocess.run([str(a) for a in argv], input=stdin, capture_output=True, timeout=120)
    if check:
        assert result.returncode == 0, f"{argv}: {result.stderr.decode(errors='replace')}"
    return result


def one_line_failure(result: subprocess.CompletedProcess, pattern: str) -> None:
    """The command failed with one line on stderr that matches `pattern`."""
    lines = result.stderr.decode(errors="replace").strip().splitlines()
    assert result.returncode != 0 and len(lines) == 1 and re.search(pattern, lines[0]), (result.returncode, lines)
