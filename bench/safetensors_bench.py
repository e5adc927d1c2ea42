"""Encrypted safetensors against plain safetensors and cryptotensors, in one
run on one machine: loading a model from the page cache (/dev/shm) to a
GPU and to the CPU, and saving one from GPU tensors.

    python3 bench/safetensors_bench.py --gib 8 --gib 32 --dir /dev/shm --repeats 3 --json out.json

Each model is bf16 weights in 32 tensors of equal size. For each size the
encrypted file (warpcrypt.safetensors, AES-256-GCM, 2 MiB chunks) and the
plain file (safetensors) are written, then each loader runs `--repeats`
times in turns and the best time is kept; every load is checked against
the weights' checksums. Loads to a GPU end with the data on the device and
the device synchronized. Rows:

- safetensors: ``safetensors.torch.load_file`` of the plain file;
- cryptotensors: ``cryptotensors.torch.load_file`` of the encrypted file
  (its own key provider; skipped past --ct-max-gib, and where the package
  is missing);
- warpcrypt: ``warpcrypt.safetensors.load_file`` of the encrypted file;
- warpcrypt, no decryption: the same loader on the plain file, which is
  the same pipeline with the decryption left out;
- warpcrypt, sharded: the same weights saved with ``save_state_dict`` in
  huggingface_hub's default 5 GB shards, loaded with ``load_state_dict``;
- the saves: warpcrypt from the GPU tensors, safetensors (which copies them
  to the host first), cryptotensors from host tensors;
- get_slice of a quarter of a 1 GiB tensor, to the GPU and to the CPU, and
  the share of the tensor's bytes read for it.
Only one of the two files of a size is on /dev/shm while the other is
measured, so 32 GiB fits a 64 GiB tmpfs.

``--cpu-only`` (a machine without a GPU or PyTorch) compares the NumPy
loaders instead, on float16 weights: ``safetensors.numpy.load_file``,
``cryptotensors.numpy.load_file`` and warpcrypt's, each returning arrays in
memory, checked against the weights.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import shutil
import time

import numpy as np

from run_record import run_record
import warpcrypt
import warpcrypt.safetensors as ws
import warpcrypt.safetensors.torch as wpt

try:
    import torch
except ImportError:
    torch = None

TENSORS = 32


def model(gib: float) -> dict[str, torch.Tensor]:
    per_tensor = int(gib * 2**30) // TENSORS // 2
    generator = torch.Generator(device="cuda:0").manual_seed(0)
    return {f"layer.{i}.weight": torch.randn(per_tensor, dtype=torch.bfloat16, device="cuda:0", generator=generator)
            for i in range(TENSORS)}


def checksums(tensors: dict[str, torch.Tensor]) -> dict[str, float]:
    return {name: float(t.to("cuda:0").view(torch.int16).to(torch.int64).sum()) for name, t in tensors.items()}


def reserve(path: str, size: int) -> None:
    fd = os.open(path, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o600)
    try:
        os.posix_fallocate(fd, 0, size)
    finally:
        os.close(fd)
        os.unlink(path)


def best(repeats: int, run, check, on_gpu: bool = True) -> float:
    """The shortest of `repeats` runs, each checked; on a GPU each ends with
    the device synchronized and starts with PyTorch's cache emptied."""
    times = []
    for _ in range(repeats):
        gc.collect()
        if on_gpu:
            torch.cuda.empty_cache()
        start = time.perf_counter()
        result = run()
        if on_gpu:
            torch.cuda.synchronize()
        times.append(time.perf_counter() - start)
        check(result)
        del result
    return min(times)


class Rows:
    """The run's figures: printed as they come, written as JSON at the end."""

    def __init__(self, machine: dict) -> None:
        self.run = run = run_record()
        self.common = {**machine, "cores": run["cores"], "commit": run["commit"], "date": run["date"],
                       "host": run["host"]}
        self.rows: list[dict] = []

    def add(self, size: float, operation: str, seconds: float) -> None:
        entry = {"gib": size, "operation": operation, "seconds": round(seconds, 4),
                 "gb_per_s": round(size * 2**30 / seconds / 1e9, 2), **self.common}
        self.rows.append(entry)
        print(f"{size:6g} GiB  {operation:<44} {seconds:8.3f} s  {entry['gb_per_s']:7.2f} GB/s", flush=True)

    def write(self, path: str | None) -> None:
        if path:
            with open(path, "w") as f:
                json.dump({"run": self.run, "warpcrypt": warpcrypt.__version__, "rows": self.rows}, f, indent=1)


def bench_keys(cryptotensors) -> dict:
    """A key set, also handed to cryptotensors' key provider where it is."""
    keys = ws.generate_keys(enc_kid="bench-master", sign_kid="bench-signer")
    if cryptotensors is not None:
        cryptotensors.register_direct_key_provider(keys=keys["keys"])
    return keys


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gib", type=float, action="append", help="model sizes (default: 8)")
    parser.add_argument("--dir", default="/dev/shm")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--ct-max-gib", type=float, default=8, help="largest size cryptotensors runs on")
    parser.add_argument("--cpu-max-gib", type=float, default=8, help="largest size the CPU loads run on")
    parser.add_argument("--json", help="write the rows here too")
    parser.add_argument("--cpu-only", action="store_true", help="the NumPy loaders on the CPU (no GPU needed)")
    parser.add_argument("--device-map-only", action="store_true",
                        help="only the saves and the loads to cuda:0 and, where there are two GPUs, to both")
    args = parser.parse_args()
    if args.cpu_only:
        cpu_only(args)
        return
    try:
        import cryptotensors
        import cryptotensors.torch
    except ImportError:
        cryptotensors = None
    import safetensors.torch

    keys = bench_keys(cryptotensors)
    enc, sign = keys["keys"]
    rows = Rows({"device": torch.cuda.get_device_name(0), "gpus": torch.cuda.device_count()})
    row = rows.add

    for size in args.gib or [8.0]:
        weights = model(size)
        sums = checksums(weights)

        def check(loaded: dict[str, torch.Tensor]) -> None:
            if checksums(loaded) != sums:
                raise SystemExit(f"a load of {size} GiB came back different")

        encrypted = os.path.join(args.dir, f"bench-{size:g}.encrypted.safetensors")
        plain = os.path.join(args.dir, f"bench-{size:g}.plain.safetensors")
        # The encrypted file: saved from the GPU, then loaded.
        row(size, "save: warpcrypt from GPU tensors", best(args.repeats, lambda: ws.save_file(weights, encrypted, keys=keys),
                                                           lambda _: None))
        # What bounds the save: the writer reserves the file's blocks first
        # (posix_fallocate, one thread: tmpfs allocates and zeroes each page).
        row(size, "bound: posix_fallocate of that size alone", best(args.repeats, lambda: reserve(encrypted + ".bound",
                                                                   os.path.getsize(encrypted)), lambda _: None))
        load_gpu = best(args.repeats, lambda: ws.load_file(encrypted, device="cuda:0", keys=keys), check)
        row(size, "load to cuda:0: warpcrypt", load_gpu)
        if torch.cuda.device_count() > 1:
            half = TENSORS // 2
            device_map = {f"layer.{i}.": f"cuda:{i // half}" for i in range(TENSORS)}
            row(size, "load to cuda:0 and cuda:1: warpcrypt",
                best(args.repeats, lambda: ws.load_file(encrypted, device=device_map, keys=keys), check))
        if args.device_map_only:
            os.unlink(encrypted)
            del weights
            continue
        if size <= args.cpu_max_gib:
            row(size, "load to cpu: warpcrypt",
                best(args.repeats, lambda: ws.load_file(encrypted, device="cpu", keys=keys), check))
        if cryptotensors is not None and size <= args.ct_max_gib:
            row(size, "load to cuda:0: cryptotensors",
                best(args.repeats, lambda: cryptotensors.torch.load_file(encrypted, device="cuda:0"), check))
            if size <= args.cpu_max_gib:
                row(size, "load to cpu: cryptotensors",
                    best(args.repeats, lambda: cryptotensors.torch.load_file(encrypted, device="cpu"), check))
        # The same weights as a sharded checkpoint (huggingface_hub's
        # default 5 GB shards), every shard read at once.
        sharded = os.path.join(args.dir, f"bench-{size:g}.sharded")
        wpt.save_state_dict(weights, sharded, keys=keys)
        os.unlink(encrypted)
        row(size, "load to cuda:0: warpcrypt, sharded checkpoint (5 GB shards)",
            best(args.repeats, lambda: wpt.load_state_dict(sharded, device="cuda:0", keys=keys), check))
        shutil.rmtree(sharded)
        # The plain file.
        row(size, "save: safetensors from GPU tensors",
            best(1, lambda: safetensors.torch.save_file(weights, plain), lambda _: None))
        row(size, "load to cuda:0: safetensors",
            best(args.repeats, lambda: safetensors.torch.load_file(plain, device="cuda:0"), check))
        row(size, "load to cuda:0: warpcrypt, no decryption (plain file)",
            best(args.repeats, lambda: ws.load_file(plain, device="cuda:0"), check))
        if size <= args.cpu_max_gib:
            # load_file maps the file and reads nothing until a tensor is
            # used; a copy of each tensor reads it, as the other CPU loads do.
            row(size, "load to cpu: safetensors, each tensor copied out of the mapping",
                best(args.repeats, lambda: {name: t.clone() for name, t in
                                            safetensors.torch.load_file(plain, device="cpu").items()}, check))
        os.unlink(plain)
        if cryptotensors is not None and size <= args.ct_max_gib:
            host = {name: t.cpu() for name, t in weights.items()}
            row(size, "save: cryptotensors from host tensors",
                best(1, lambda: cryptotensors.torch.save_file(host, encrypted, config={"enc_key": enc, "sign_key": sign}),
                     lambda _: None))
            del host
            os.unlink(encrypted)
        del weights
    slice_rows(args, keys, row)
    rows.write(args.json)


def slice_rows(args: argparse.Namespace, keys: dict, row) -> None:
    """get_slice of a quarter of a 1 GiB tensor (rows [n/4, n/2), as a
    tensor-parallel rank of four takes its block): the time, and the bytes
    the process read for it (rchar of /proc/self/io: every read call's
    bytes, the page cache's included) against the tensor's."""
    path = os.path.join(args.dir, "bench-slice.encrypted.safetensors")
    weight = torch.randn(16384, 32768, dtype=torch.bfloat16, device="cuda:0")  # 1 GiB
    ws.save_file({"w": weight}, path, keys=keys)
    rows = weight.shape[0]
    want = weight[rows // 4:rows // 2].cpu()
    for device in ("cuda:0", "cpu"):
        before = read_bytes()
        with ws.safe_open(path, "pt", device=device, keys=keys) as f:
            start = time.perf_counter()
            part = f.get_slice("w")[rows // 4:rows // 2]
            if device != "cpu":
                torch.cuda.synchronize()
            seconds = time.perf_counter() - start
        share = (read_bytes() - before) / (weight.numel() * weight.element_size())
        if not torch.equal(part.cpu(), want):
            raise SystemExit("a slice came back different")
        row(1.0, f"get_slice of a quarter to {device}: seconds (read {100 * share:.1f} % of the tensor)", seconds)
    os.unlink(path)


def read_bytes() -> int:
    with open("/proc/self/io") as io:
        return next(int(line.split()[1]) for line in io if line.startswith("rchar:"))


def cpu_only(args: argparse.Namespace) -> None:
    try:
        import cryptotensors
        import cryptotensors.numpy
    except ImportError:
        cryptotensors = None
    import safetensors.numpy

    keys = bench_keys(cryptotensors)
    rows = Rows({"device": "cpu"})
    for size in args.gib or [1.0]:
        per_tensor = int(size * 2**30) // TENSORS // 2
        rng = np.random.default_rng(0)
        weights = {f"layer.{i}.weight": rng.integers(0, 2**16, per_tensor, dtype=np.uint16).view(np.float16)
                   for i in range(TENSORS)}

        def check(loaded: dict) -> None:
            if any(not np.array_equal(loaded[k].view(np.uint16), weights[k].view(np.uint16)) for k in weights):
                raise SystemExit("a load came back different")

        def timed(label: str, run) -> None:
            rows.add(size, label, best(args.repeats, run, check, on_gpu=False))

        encrypted = os.path.join(args.dir, f"bench-{size:g}.encrypted.safetensors")
        plain = os.path.join(args.dir, f"bench-{size:g}.plain.safetensors")
        ws.save_file(weights, encrypted, keys=keys)
        safetensors.numpy.save_file(weights, plain)
        for _ in range(2):  # in turns, twice, so neither loader always runs first
            timed("load to cpu (numpy): safetensors, plain file", lambda: safetensors.numpy.load_file(plain))
            timed("load to cpu (numpy): warpcrypt, no decryption", lambda: ws.load_file(plain, framework="np"))
            timed("load to cpu (numpy): warpcrypt",
                  lambda: ws.load_file(encrypted, keys=keys, framework="np"))
            if cryptotensors is not None:
                timed("load to cpu (numpy): cryptotensors", lambda: cryptotensors.numpy.load_file(encrypted))
        os.unlink(encrypted)
        os.unlink(plain)
    rows.write(args.json)


if __name__ == "__main__":
    main()
