"""Can the copy engines read a file's page-cache pages straight, with no
copy into pinned memory first? Times, for one file in /dev/shm:

- read: the loader's way, readers copying pieces into pinned slots
  (os.preadv, 16 threads) and each slot copied to the GPU;
- register: the file mapped (mmap) and its pages registered with CUDA
  (cudaHostRegister, read-only), in pieces by 16 threads, then each piece
  copied to the GPU from the mapping; registration and copies are timed
  apart and together.

    python3 bench/page_cache_register_bench.py --gib 8 --dir /dev/shm --json out.json
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import mmap
import os
import time

from run_record import run_record
import numpy
import torch

PIECE = 64 << 20
THREADS = 16
READ_ONLY = 0x08  # cudaHostRegisterReadOnly


def read_way(path: str, dst: torch.Tensor) -> float:
    size = dst.numel()
    slots = [torch.empty(16 << 20, dtype=torch.uint8, pin_memory=True) for _ in range(2 * THREADS)]
    views = [memoryview(slot.numpy()) for slot in slots]
    stream = torch.cuda.Stream()
    events = [None] * len(slots)
    fd = os.open(path, os.O_RDONLY)
    start = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(THREADS) as pool:
        offsets = list(range(0, size, 16 << 20))
        futures = []
        for i, offset in enumerate(offsets):
            slot = i % len(slots)
            if events[slot] is not None:
                events[slot].synchronize()
            length = min(16 << 20, size - offset)
            futures.append((pool.submit(os.preadv, fd, [views[slot][:length]], offset), slot, offset, length))
            if len(futures) >= THREADS:
                future, s, o, n = futures.pop(0)
                future.result()
                with torch.cuda.stream(stream):
                    dst[o:o + n].copy_(slots[s][:n], non_blocking=True)
                    events[s] = torch.cuda.Event()
                    events[s].record(stream)
        for future, s, o, n in futures:
            future.result()
            with torch.cuda.stream(stream):
                dst[o:o + n].copy_(slots[s][:n], non_blocking=True)
        stream.synchronize()
    os.close(fd)
    return time.perf_counter() - start


def register_way(path: str, dst: torch.Tensor) -> dict[str, float]:
    size = dst.numel()
    fd = os.open(path, os.O_RDONLY)
    mapped = mmap.mmap(fd, size, prot=mmap.PROT_READ, flags=mmap.MAP_SHARED)
    array = numpy.frombuffer(mapped, dtype=numpy.uint8)  # a read-only view, for its address
    address = array.ctypes.data
    rt = torch.cuda.cudart()
    stream = torch.cuda.Stream()
    pieces = list(range(0, size, PIECE))

    def register(offset: int) -> None:
        length = min(PIECE, size - offset)
        status = rt.cudaHostRegister(address + offset, length, READ_ONLY)
        if int(status) != 0:
            raise RuntimeError(f"cudaHostRegister: {status}")

    start = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(THREADS) as pool:
        list(pool.map(register, pieces))
    registered = time.perf_counter() - start
    source = torch.from_numpy(array)
    copy_start = time.perf_counter()
    with torch.cuda.stream(stream):
        for offset in pieces:
            length = min(PIECE, size - offset)
            dst[offset:offset + length].copy_(source[offset:offset + length], non_blocking=True)
    stream.synchronize()
    copied = time.perf_counter() - copy_start
    for offset in pieces:
        rt.cudaHostUnregister(address + offset)
    del source, array
    mapped.close()
    os.close(fd)
    return {"register_s": registered, "copy_s": copied, "total_s": registered + copied}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gib", type=float, default=8)
    parser.add_argument("--dir", default="/dev/shm")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json")
    args = parser.parse_args()
    size = int(args.gib * 2**30)
    path = os.path.join(args.dir, "register-bench.bin")
    with open(path, "wb") as out:
        block = os.urandom(64 << 20)
        for _ in range(size // len(block)):
            out.write(block)
    dst = torch.empty(size, dtype=torch.uint8, device="cuda:0")
    rows = []
    for _ in range(args.repeats):
        seconds = read_way(path, dst)
        rows.append({"way": "read into pinned slots", "seconds": seconds, "GBps": size / seconds / 1e9})
        timing = register_way(path, dst)
        rows.append({"way": "register the mapping", **timing, "GBps": size / timing["total_s"] / 1e9,
                     "copy_GBps": size / timing["copy_s"] / 1e9})
    os.unlink(path)
    for row in rows:
        print(json.dumps(row))
    if args.json:
        with open(args.json, "w") as out:
            json.dump({"run": run_record(), "device": torch.cuda.get_device_name(0), "gib": args.gib,
                       "rows": rows}, out, indent=1)


if __name__ == "__main__":
    main()
