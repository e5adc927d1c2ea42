"""What bounds loading a file from the page cache to two GPUs at once: the
parts of warpcrypt.safetensors' GPU loader measured alone, on one file in
/dev/shm.

    python3 bench/multigpu_load_bounds.py --gib 16 --dir /dev/shm --json out.json

Rows, each the best of --repeats runs, in GB/s of file bytes:

- topology: the GPUs' NUMA nodes and PCIe link, each node's CPUs, and
  ``nvidia-smi topo -m``;
- read: T reader threads (the loader's readers) ``preadv`` the whole file
  in 16 MiB pieces into pinned buffers, no copies; with the threads on any
  CPU, and bound to one NUMA node; and with each piece landing 16, 64 or
  2048 bytes into its buffer instead of at its start: the kernel's copy
  from the page cache is slow where its destination lies 1 to 31 bytes
  past its source within a page (src/engine/io_buffer.cpp), and the
  loader's slots take a file's bytes at whatever place in a page the
  file's header leaves them;
- copy: pinned buffers copied to one GPU, then to every GPU at once, no
  reads; each GPU's buffers allocated by a thread on the GPU's node;
- pipeline: reads and copies together, as the loader runs them without
  decryption, half the file to each GPU: readers on any CPU, and each
  GPU's readers and buffers on the GPU's node; and with 1 and 4 MiB slots
  instead of the loader's 16.

The file's pages sit wherever the kernel put them when it was written, as
a model's do.
"""

from __future__ import annotations

import argparse
import collections
import concurrent.futures
import json
import os
import subprocess
import threading
import time
from typing import Any, Callable

import torch

from run_record import run_record

PIECE = 16 << 20
# Room past a piece in each pinned buffer, for reads that land further in.
LEAD_ROOM = 4096


def node_cpus() -> dict[int, set[int]]:
    nodes: dict[int, set[int]] = {}
    root = "/sys/devices/system/node"
    for name in sorted(os.listdir(root)) if os.path.isdir(root) else []:
        if name.startswith("node") and name[4:].isdigit():
            cpus: set[int] = set()
            with open(f"{root}/{name}/cpulist") as listing:
                for part in listing.read().strip().split(","):
                    low, _, high = part.partition("-")
                    cpus.update(range(int(low), int(high or low) + 1))
            nodes[int(name[4:])] = cpus & os.sched_getaffinity(0)
    return nodes


def gpu_nodes() -> list[int]:
    query = subprocess.run(["nvidia-smi", "--query-gpu=pci.bus_id", "--format=csv,noheader"],
                           capture_output=True, text=True, check=True).stdout.split()
    nodes = []
    for bus in query:
        # nvidia-smi gives an 8-digit domain; sysfs a 4-digit one, lower case.
        path = f"/sys/bus/pci/devices/{bus[-12:].lower()}/numa_node"
        try:
            with open(path) as f:
                nodes.append(max(0, int(f.read())))
        except OSError:
            nodes.append(0)
    return nodes


def topology() -> dict[str, Any]:
    link = subprocess.run(["nvidia-smi", "--query-gpu=index,pci.bus_id,pcie.link.gen.current,pcie.link.width.current",
                           "--format=csv,noheader"], capture_output=True, text=True).stdout
    matrix = subprocess.run(["nvidia-smi", "topo", "-m"], capture_output=True, text=True).stdout
    return {"gpu_nodes": gpu_nodes(), "node_cpus": {n: len(c) for n, c in node_cpus().items()},
            "pcie": link.strip().splitlines(), "topo": matrix}


def pinned(count: int, cpus: set[int] | None, piece: int = PIECE) -> list[torch.Tensor]:
    """`count` pinned buffers of a piece each, allocated (so first touched)
    by a thread on `cpus` where given."""
    out: list[torch.Tensor] = []

    def allocate() -> None:
        if cpus:
            os.sched_setaffinity(0, cpus)
        out.extend(torch.empty(piece + LEAD_ROOM, dtype=torch.uint8, pin_memory=True) for _ in range(count))

    thread = threading.Thread(target=allocate)
    thread.start()
    thread.join()
    return out


def bound_pool(threads: int, cpus: set[int] | None) -> concurrent.futures.ThreadPoolExecutor:
    def bind() -> None:
        if cpus:
            os.sched_setaffinity(0, cpus)
    return concurrent.futures.ThreadPoolExecutor(threads, initializer=bind)


def read_piece(fd: int, view: memoryview, offset: int) -> None:
    done = 0
    while done < len(view):
        got = os.preadv(fd, [view[done:]], offset + done)
        if got == 0:
            raise EOFError(offset)
        done += got


def read_only(path: str, threads: int, cpus: set[int] | None, lead: int = 0) -> float:
    size = os.path.getsize(path)
    slots = pinned(threads, cpus)
    views = [memoryview(slot.numpy()) for slot in slots]
    fd = os.open(path, os.O_RDONLY)
    try:
        with bound_pool(threads, cpus) as pool:
            start = time.perf_counter()
            offsets = iter(range(0, size, PIECE))
            lock = threading.Lock()

            def reader(index: int) -> None:
                while True:
                    with lock:
                        offset = next(offsets, None)
                    if offset is None:
                        return
                    read_piece(fd, views[index][lead:lead + min(PIECE, size - offset)], offset)

            list(pool.map(reader, range(threads)))
            return size / (time.perf_counter() - start) / 1e9
    finally:
        os.close(fd)


def copy_only(devices: list[int], nodes: dict[int, set[int]], placement: list[int], gib: float) -> float:
    per_device = int(gib * 2**30) // len(devices) // PIECE
    targets = [torch.empty(8 * PIECE, dtype=torch.uint8, device=f"cuda:{d}") for d in devices]
    sources = [pinned(8, nodes.get(placement[d])) for d in devices]
    streams = [torch.cuda.Stream(f"cuda:{d}") for d in devices]
    for d in devices:
        torch.cuda.synchronize(d)

    def copies(i: int) -> None:
        with torch.cuda.stream(streams[i]):
            for n in range(per_device):
                targets[i][(n % 8) * PIECE:(n % 8 + 1) * PIECE].copy_(sources[i][n % 8][:PIECE], non_blocking=True)
        streams[i].synchronize()

    start = time.perf_counter()
    threads = [threading.Thread(target=copies, args=(i,)) for i in range(len(devices))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return per_device * PIECE * len(devices) / (time.perf_counter() - start) / 1e9


def pipeline(path: str, devices: list[int], readers: int, nodes: dict[int, set[int]] | None,
             placement: list[int], piece: int = PIECE) -> float:
    """The loader's shape without decryption: per GPU, `readers` threads fill
    pinned slots of `piece` bytes that one thread copies to the device, two
    slots per piece in flight; the file's halves go to the GPUs."""
    size = os.path.getsize(path)
    share = -(-size // len(devices) // piece) * piece
    fd = os.open(path, os.O_RDONLY)

    def load(i: int) -> None:
        device = devices[i]
        cpus = nodes.get(placement[device]) if nodes else None
        if cpus:
            os.sched_setaffinity(0, cpus)
        target = torch.empty(min(share, size - i * share), dtype=torch.uint8, device=f"cuda:{device}")
        slots = pinned(2 * readers, cpus, piece)
        views = [memoryview(slot.numpy()) for slot in slots]
        stream = torch.cuda.Stream(f"cuda:{device}")
        events: list[Any] = [None] * len(slots)
        pending: collections.deque[tuple[concurrent.futures.Future[None], int, int, int]] = collections.deque()

        def issue(future: concurrent.futures.Future[None], slot: int, start: int, length: int) -> None:
            future.result()
            with torch.cuda.stream(stream):
                target[start:start + length].copy_(slots[slot][:length], non_blocking=True)
                events[slot] = torch.cuda.Event()
                events[slot].record(stream)

        with bound_pool(readers, cpus) as pool:
            slot = 0
            for start in range(0, len(target), piece):
                length = min(piece, len(target) - start)
                if len(pending) == readers:
                    issue(*pending.popleft())
                if events[slot] is not None:
                    events[slot].synchronize()
                pending.append((pool.submit(read_piece, fd, views[slot][:length], i * share + start), slot,
                                start, length))
                slot = (slot + 1) % len(slots)
            while pending:
                issue(*pending.popleft())
        stream.synchronize()

    try:
        begin = time.perf_counter()
        with concurrent.futures.ThreadPoolExecutor(len(devices)) as loaders:
            list(loaders.map(load, range(len(devices))))  # raises what a loader raised
        return size / (time.perf_counter() - begin) / 1e9
    finally:
        os.close(fd)


def best(repeats: int, run: Callable[[], float]) -> float:
    return max(run() for _ in range(repeats))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gib", type=float, default=16)
    parser.add_argument("--dir", default="/dev/shm")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json")
    args = parser.parse_args()
    results: dict[str, Any] = {"run": run_record(), "gib": args.gib, "topology": topology()}
    print(results["topology"]["topo"])
    print("GPU NUMA nodes:", results["topology"]["gpu_nodes"], "CPUs per node:", results["topology"]["node_cpus"])
    nodes = node_cpus()
    placement = results["topology"]["gpu_nodes"]
    devices = list(range(torch.cuda.device_count()))
    path = os.path.join(args.dir, "multigpu-load-bounds.bin")
    block = os.urandom(256 << 20)
    with open(path, "wb") as f:
        for _ in range(int(args.gib * 4)):
            f.write(block)
    rows: dict[str, float] = {}

    def row(name: str, run: Callable[[], float]) -> None:
        rows[name] = round(best(args.repeats, run), 2)
        print(f"{rows[name]:7.2f} GB/s  {name}", flush=True)

    try:
        for threads in sorted({16, 32, min(64, os.cpu_count() or 1)}):
            row(f"read, {threads} threads, any CPU", lambda t=threads: read_only(path, t, None))
        threads = min(32, os.cpu_count() or 1)
        for lead in (16, 64, 2048):
            row(f"read, {threads} threads, any CPU, {lead} bytes into the buffer",
                lambda lead=lead: read_only(path, threads, None, lead))
        for node, cpus in nodes.items():
            row(f"read, 16 threads on node {node}", lambda c=cpus: read_only(path, 16, c))
        for d in devices:
            row(f"copy to cuda:{d} alone", lambda d=d: copy_only([d], nodes, placement, args.gib))
        if len(devices) > 1:
            row("copy to every GPU at once", lambda: copy_only(devices, nodes, placement, args.gib))
        row("pipeline to cuda:0, 16 readers, any CPU", lambda: pipeline(path, devices[:1], 16, None, placement))
        if len(devices) > 1:
            row("pipeline to every GPU, 16 readers each, any CPU",
                lambda: pipeline(path, devices, 16, None, placement))
            row("pipeline to every GPU, 16 readers each on the GPU's node",
                lambda: pipeline(path, devices, 16, nodes, placement))
        # Smaller slots: all of them in flight fit the last-level cache, so
        # the copy engines might read what the readers wrote from there.
        for mib in (1, 4):
            row(f"pipeline to cuda:0, 16 readers, {mib} MiB slots",
                lambda mib=mib: pipeline(path, devices[:1], 16, None, placement, mib << 20))
            if len(devices) > 1:
                row(f"pipeline to every GPU, 16 readers each, {mib} MiB slots",
                    lambda mib=mib: pipeline(path, devices, 16, None, placement, mib << 20))
    finally:
        os.unlink(path)
    results["rows"] = rows
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
