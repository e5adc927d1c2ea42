"""Encrypts a large NumPy array on disk in chunks, with a progress bar, then
decrypts it and checks the result.

The array is a .npy file opened as a memmap, so it never has to fit in
memory: a cipher context carries the stream position from one chunk to the
next, and each chunk's ciphertext goes straight into a memmap of the output
file. The output is itself a .npy file whose header (shape and dtype) stays
readable and whose data is ciphertext.

    python examples/encrypt_memmap.py [--size-mib 256] [--chunk-mib 16] [--dir DIR]
"""

from __future__ import annotations

import argparse
import secrets
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import warpcrypt
from warpcrypt import Cipher, algorithms, modes

ROW = 4096  # float32 values per row


def progress(label: str, done: int, total: int, started: float) -> None:
    width = 32
    filled = width * done // total
    rate = done / max(time.perf_counter() - started, 1e-9) / 1e9
    sys.stderr.write(f"\r{label:8} [{'#' * filled}{'.' * (width - filled)}] {100 * done / total:5.1f}%  "
                     f"{rate:6.2f} GB/s")
    if done == total:
        sys.stderr.write("\n")
    sys.stderr.flush()


def transform(label: str, context: warpcrypt.CipherContext, source: np.ndarray, target: np.memmap,
              chunk_bytes: int) -> None:
    """Runs `source`'s bytes through `context` into `target`, chunk by chunk.
    CTR is a stream mode: each update writes exactly as many bytes as it
    reads, so chunk i of the input lands at chunk i of the output."""
    src = source.reshape(-1).view(np.uint8)
    dst = target.reshape(-1).view(np.uint8)
    started = time.perf_counter()
    for start in range(0, src.size, chunk_bytes):
        end = min(start + chunk_bytes, src.size)
        context.update_into(src[start:end], dst[start:end])
        progress(label, end, src.size, started)
    context.finalize()
    target.flush()


def make_input(path: Path, size_bytes: int, chunk_bytes: int) -> np.memmap:
    rows = max(1, size_bytes // (4 * ROW))
    array = np.lib.format.open_memmap(path, mode="w+", dtype=np.float32, shape=(rows, ROW))
    rng = np.random.default_rng(7)
    step = max(1, chunk_bytes // (4 * ROW))
    for row in range(0, rows, step):
        array[row:row + step] = rng.random((min(step, rows - row), ROW), dtype=np.float32)
    array.flush()
    return array


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size-mib", type=int, default=256, help="size of the generated array (default 256)")
    parser.add_argument("--chunk-mib", type=int, default=16, help="bytes per update (default 16)")
    parser.add_argument("--dir", type=Path, help="where the three files go (default: a temporary folder)")
    args = parser.parse_args()
    chunk_bytes = args.chunk_mib << 20

    with tempfile.TemporaryDirectory() as scratch:
        folder = args.dir or Path(scratch)
        plain = make_input(folder / "plain.npy", args.size_mib << 20, chunk_bytes)
        key, nonce = secrets.token_bytes(32), secrets.token_bytes(16)
        cipher = Cipher(algorithms.AES(key), modes.CTR(nonce))

        encrypted = np.lib.format.open_memmap(folder / "encrypted.npy", mode="w+", dtype=plain.dtype,
                                              shape=plain.shape)
        transform("encrypt", cipher.encryptor(), plain, encrypted, chunk_bytes)
        decrypted = np.lib.format.open_memmap(folder / "decrypted.npy", mode="w+", dtype=plain.dtype,
                                              shape=plain.shape)
        transform("decrypt", cipher.decryptor(), np.load(folder / "encrypted.npy", mmap_mode="r"), decrypted,
                  chunk_bytes)

        step = max(1, chunk_bytes // (4 * ROW))
        for row in range(0, plain.shape[0], step):
            assert np.array_equal(plain[row:row + step], decrypted[row:row + step]), f"rows from {row} differ"
            assert not np.array_equal(plain[row:row + step], encrypted[row:row + step]), f"rows from {row} in clear"
        print(f"{plain.nbytes / 2**20:.0f} MiB of {plain.dtype} {plain.shape}: encrypted and decrypted in "
              f"{args.chunk_mib} MiB chunks with {cipher.name}; the round trip restores every byte")
        del plain, encrypted, decrypted  # close the memmaps before the folder goes
    return 0


if __name__ == "__main__":
    sys.exit(main())
