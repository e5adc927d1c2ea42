"""What a new file in one directory (by default /dev/shm) can take, by the
ways warpcrypt.safetensors could write it: the bound under saving weights
from the GPU. Each way writes SIZE bytes into a fresh file, best of
--repeats, the file removed after each run:

  posix_fallocate           the file's blocks reserved in one call (one thread)
  posix_fallocate, T        T threads reserving their own pieces' blocks
  allocate pages, T threads each thread allocating the pages of its own
                            pieces of a shared mapping (madvise
                            MADV_POPULATE_WRITE, as _native.fill_mapped does
                            before it copies)
  allocate and copy, T      the same, each piece then filled from a buffer
  copy into reserved, T     posix_fallocate first, then T threads copying
                            into the mapping
  pwrite, T threads         T threads writing their pieces with pwrite

    python bench/file_write_bounds.py --gib 8 --dir /dev/shm --json out.json
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import mmap
import os
import time

from warpcrypt import _native

PIECE = 16 << 20


def timed(run, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gib", type=float, default=8)
    parser.add_argument("--dir", default="/dev/shm")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, action="append", help="thread counts (default: 1, 4, 16)")
    parser.add_argument("--json")
    args = parser.parse_args()
    size = int(args.gib * (1 << 30)) // PIECE * PIECE
    path = os.path.join(args.dir, "warpcrypt-write-bound")
    source = bytearray(os.urandom(1 << 20)) * (PIECE >> 20)
    offsets = range(0, size, PIECE)
    rows = []

    def fresh(work) -> None:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            work(fd)
        finally:
            os.close(fd)
            os.unlink(path)

    def mapped(fd: int, reserve: bool, threads: int, data: bytes | None) -> None:
        if reserve:
            os.posix_fallocate(fd, 0, size)
        else:
            os.ftruncate(fd, size)
        with mmap.mmap(fd, size) as region:
            view = memoryview(region)
            with concurrent.futures.ThreadPoolExecutor(threads) as pool:
                list(pool.map(lambda at: _native.fill_mapped(view[at:at + PIECE], data), offsets))
            view.release()

    def reserve_pieces(fd: int, threads: int) -> None:
        with concurrent.futures.ThreadPoolExecutor(threads) as pool:
            list(pool.map(lambda at: os.posix_fallocate(fd, at, PIECE), offsets))

    def pwrites(fd: int, threads: int) -> None:
        os.ftruncate(fd, size)
        with concurrent.futures.ThreadPoolExecutor(threads) as pool:
            list(pool.map(lambda at: os.pwrite(fd, source, at), offsets))

    def add(way: str, threads: int, work) -> None:
        seconds = timed(lambda: fresh(work), args.repeats)
        rows.append({"way": way, "threads": threads, "bytes": size, "seconds": seconds,
                     "gb_per_s": size / seconds / 1e9})
        print(f"{way:28s} {threads:3d} threads  {seconds:7.3f} s  {size / seconds / 1e9:7.2f} GB/s", flush=True)

    add("posix_fallocate", 1, lambda fd: os.posix_fallocate(fd, 0, size))
    for threads in args.threads or [1, 4, 16]:
        add("posix_fallocate of pieces", threads, lambda fd: reserve_pieces(fd, threads))
        add("allocate pages", threads, lambda fd: mapped(fd, False, threads, None))
        add("allocate and copy", threads, lambda fd: mapped(fd, False, threads, source))
        add("copy into reserved", threads, lambda fd: mapped(fd, True, threads, source))
        add("pwrite", threads, lambda fd: pwrites(fd, threads))
    if args.json:
        with open(args.json, "w") as out:
            json.dump({"dir": args.dir, "rows": rows}, out, indent=1)


if __name__ == "__main__":
    main()
