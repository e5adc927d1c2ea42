"""The `warpcrypt-dask` command (also `python -m warpcrypt.dask`)."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import distributed

import warpcrypt
from warpcrypt.dask._jobs import DEFAULT_TASK_BYTES, JobReport, decrypt_files, encrypt_files
from warpcrypt.dask._kdf import derive_file_key
from warpcrypt.dask._manifest import read_manifest

_SIZE = re.compile(r"(\d+)([KMG]?)", re.IGNORECASE)
_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}

EXIT_FAILED_FILES = 1
EXIT_ERROR = 2


def _size(text: str) -> int:
    """A byte count with an optional binary unit: 4096, 64K, 1M, 2G."""
    match = _SIZE.fullmatch(text.strip())
    if not match:
        raise argparse.ArgumentTypeError(f"not a size: {text!r} (such as 1M or 64K)")
    return int(match[1]) * _UNITS[match[2].upper()]


def _paths(inputs: list[str]) -> str | list[str]:
    # One argument may be a folder or a quoted glob; several are files.
    return inputs[0] if len(inputs) == 1 else inputs


def _master_key(path: str) -> bytes:
    return Path(path).read_bytes()


def _add_job_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("inputs", nargs="+", metavar="INPUT",
                        help="a folder, a quoted glob ('data/**/*.bin'), or files")
    parser.add_argument("-o", "--out", required=True, help="the output folder (it holds the manifest)")
    parser.add_argument("--key-file", required=True,
                        help="the master key: a file of at least 16 random bytes (head -c 32 /dev/urandom)")
    cluster = parser.add_mutually_exclusive_group()
    cluster.add_argument("--scheduler", help="a Dask scheduler's address, such as tcp://host:8786")
    cluster.add_argument("--workers", type=int,
                         help="without --scheduler: worker processes of a local cluster (default: Dask's choice)")
    parser.add_argument("--root", help="the folder the identifiers are relative to")
    parser.add_argument("--suffix", help="the encrypted files' suffix (default .wcs sealed, .enc plain)")
    parser.add_argument("--backend", default="auto", choices=["auto", "cpu", "gpu", "hybrid"],
                        help="auto: each worker's GPU where it has one, else its CPU")
    parser.add_argument("--threads", type=int, default=0, help="CPU threads per file, 0 for every core")
    parser.add_argument("--task-bytes", type=_size, default=DEFAULT_TASK_BYTES,
                        help="bytes of small files grouped into one task (default 64M)")
    parser.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                        help="Dask's progress bar (default: on a terminal)")
    parser.add_argument("--json", metavar="FILE", help="also write the run's report as JSON")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="warpcrypt-dask",
        description="Encrypt and decrypt files on a Dask cluster, each file under its own key "
                    "derived from one master key (docs/dask.md).")
    commands = parser.add_subparsers(dest="command", required=True)

    encrypt = commands.add_parser("encrypt", help="encrypt files into an output folder")
    _add_job_arguments(encrypt)
    encrypt.add_argument("--cipher", default="aes-256-gcm",
                         help="a sealed-file AEAD (aes-256-gcm, chacha20-poly1305, ...) or a plain "
                              "cipher with an IV (aes-256-ctr, chacha20, ...)")
    encrypt.add_argument("--chunk-size", type=_size, default=1 << 20,
                         help="the sealed format's chunk size, a power of two from 4K to 1G (default 1M)")

    decrypt = commands.add_parser("decrypt", help="decrypt what encrypt wrote")
    _add_job_arguments(decrypt)
    decrypt.add_argument("--source-manifest",
                         help="the encryption's manifest (default: the one in the input folder)")

    derive = commands.add_parser(
        "derive-key", help="one file's derived key, for `warpcrypt open -kfile` or `warpcrypt enc -K -iv`")
    derive.add_argument("identifier", help="the file's path relative to the input root, as in the manifest")
    derive.add_argument("--key-file", required=True, help="the master key file")
    source = derive.add_mutually_exclusive_group()
    source.add_argument("--manifest", help="the encryption's manifest: gives the cipher and the job id")
    source.add_argument("--cipher", default="aes-256-gcm", help="a sealed-file AEAD (without --manifest)")
    derive.add_argument("--out", help="sealed files: write the raw key here (mode 0600) for -kfile")
    return parser


@contextlib.contextmanager
def _client(args: argparse.Namespace) -> Iterator[distributed.Client]:
    if args.scheduler:
        with distributed.Client(args.scheduler) as client:
            yield client
    else:
        # One Dask thread per worker process: the library runs its own
        # threads (and the GPU) under each file.
        with distributed.LocalCluster(n_workers=args.workers, threads_per_worker=1) as cluster, \
                distributed.Client(cluster) as client:
            yield client


def _run_job(args: argparse.Namespace) -> int:
    progress = sys.stdout.isatty() if args.progress is None else args.progress
    options = {"key": _master_key(args.key_file), "root": args.root, "suffix": args.suffix,
               "backend": args.backend, "threads": args.threads, "task_bytes": args.task_bytes,
               "progress": progress}
    with _client(args) as client:
        if args.command == "encrypt":
            report: JobReport = encrypt_files(_paths(args.inputs), args.out, client=client, cipher=args.cipher,
                                              chunk_size=args.chunk_size, **options)
        else:
            report = decrypt_files(_paths(args.inputs), args.out, client=client,
                                   source_manifest=args.source_manifest, **options)
    print(report.summary())
    if args.json:
        Path(args.json).write_text(json.dumps(report.to_dict(), indent=1) + "\n")
    return 0 if report.ok else EXIT_FAILED_FILES


def _derive_key(args: argparse.Namespace) -> int:
    master_key = _master_key(args.key_file)
    cipher, job_id = args.cipher, None
    if args.manifest:
        manifest = read_manifest(args.manifest)
        cipher = manifest["cipher"]
        job_id = bytes.fromhex(manifest["job_id"]) if manifest["job_id"] else None
    derived = derive_file_key(master_key, args.identifier, cipher=cipher, job_id=job_id)
    if derived.iv is not None:
        # Shaped for the command line: warpcrypt enc -d -<cipher> $(...) -in ... -out ...
        print(f"-K {derived.key.hex()} -iv {derived.iv.hex()}")
    elif args.out:
        descriptor = os.open(args.out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "wb") as file:
            file.write(derived.key)
    else:
        print(derived.key.hex())
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        return _derive_key(args) if args.command == "derive-key" else _run_job(args)
    except (warpcrypt.Error, OSError, ValueError) as error:  # ManifestMismatch is a ValueError
        print(f"warpcrypt-dask: error: {error}", file=sys.stderr)
        return EXIT_ERROR
