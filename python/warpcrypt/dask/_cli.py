"""The `warpcrypt-dask` command (also `python -m warpcrypt.dask`).

Exit status (docs/dask.md): 0 when every file is done; 1 when some files
failed (the summary lists them); 2 when the job could not run or stopped
(bad arguments, no dask extra, a wrong key, an unreadable input, a cluster
that cannot be reached or is lost, a half-configured TLS), with one line on
stderr saying why; 130 when interrupted. The
module imports Dask only once the command runs, so that the missing extra is
one of those lines, not a traceback."""

from __future__ import annotations

import argparse
import contextlib
import errno
import json
import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import warpcrypt
from warpcrypt._files import _output

if TYPE_CHECKING:
    import distributed

    from warpcrypt.dask._keyring import MasterKey

_SIZE = re.compile(r"(\d+)([KMG]?)", re.IGNORECASE)
_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}

EXIT_FAILED_FILES = 1
EXIT_ERROR = 2
EXIT_INTERRUPTED = 130


def _size(text: str) -> int:
    """A byte count with an optional binary unit: 4096, 64K, 1M, 2G."""
    match = _SIZE.fullmatch(text.strip())
    if not match:
        raise argparse.ArgumentTypeError(f"not a size: {text!r} (such as 1M or 64K)")
    return int(match[1]) * _UNITS[match[2].upper()]


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line like every other failure."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_ERROR, f"warpcrypt-dask: error: {message} (see {self.prog} --help)\n")


def _paths(inputs: list[str]) -> str | list[str]:
    # One argument may be a folder or a quoted glob; several are files.
    return inputs[0] if len(inputs) == 1 else inputs


def _add_job_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("inputs", nargs="+", metavar="INPUT",
                        help="a folder, a quoted glob ('data/**/*.bin'), or files: local paths or fsspec URLs")
    parser.add_argument("-o", "--out", required=True, help="the output folder: a local path or an fsspec URL")
    parser.add_argument("--key-file", required=True,
                        help="the master key: a file of at least 16 random bytes (head -c 32 /dev/urandom)")
    parser.add_argument("--workers-read-key", action="store_true",
                        help="every worker reads --key-file itself, at the same path; the key then never "
                             "passes through the scheduler")
    cluster = parser.add_mutually_exclusive_group()
    cluster.add_argument("--scheduler", help="a Dask scheduler's address, such as tcp://host:8786")
    cluster.add_argument("--scheduler-file", metavar="FILE",
                         help="the file that `dask scheduler --scheduler-file FILE` wrote its address to")
    cluster.add_argument("--workers", type=int,
                         help="without a scheduler: worker processes of a local cluster (default: one per usable CPU)")
    parser.add_argument("--root", help="the folder the identifiers are relative to")
    parser.add_argument("--suffix", help="the encrypted files' suffix (default .wcs sealed, .enc plain)")
    parser.add_argument("--manifest", help="where this job's manifest goes (default: beside the output folder, "
                                           "as OUT.warpcrypt-manifest.json)")
    parser.add_argument("--backend", default="auto", choices=["auto", "cpu", "gpu", "hybrid"],
                        help="auto: where the library's plan for each file says (the CPU for files); "
                             "hybrid: a worker's GPU joins where it makes a file faster")
    parser.add_argument("--threads", type=int, default=0,
                        help="CPU threads per file; 0: the worker's usable CPUs (a local cluster's divided by "
                             "its workers)")
    parser.add_argument("--task-bytes", type=_size, help="bytes of small files grouped into one task (default 64M)")
    parser.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                        help="show the bytes done on stderr (default: on a terminal)")
    parser.add_argument("--json", metavar="FILE", help="also write the run's report as JSON")
    parser.add_argument("--verbose", action="store_true", help="keep Dask's own log messages")


def _add_trust_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--trust-unauthenticated-manifest", action="store_true",
                        help="accept an encryption manifest of version 2, which has no MAC, as it is: only for one "
                             "you know unchanged")


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="warpcrypt-dask",
        description="Encrypt and decrypt files on a Dask cluster, each file under its own key "
                    "derived from one master key (docs/dask.md).")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

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
                         help="the encryption's manifest (default: the one beside the input folder)")
    _add_trust_argument(decrypt)

    derive = commands.add_parser(
        "derive-key", help="one file's derived key, for `warpcrypt open -kfile` or `warpcrypt enc -K -iv`")
    derive.add_argument("identifier", help="the file's path relative to the input root, as in the manifest")
    derive.add_argument("--key-file", required=True, help="the master key file")
    derive.add_argument("--manifest", required=True,
                        help="the encryption's manifest: its job id, its cipher and, for a plain cipher, the file's IV")
    derive.add_argument("--out", help="sealed files: write the raw key here (mode 0600) for -kfile")
    _add_trust_argument(derive)
    return parser


def _read_key(path: str) -> bytes:
    from warpcrypt.dask._kdf import read_key_file

    return read_key_file(path)


@contextlib.contextmanager
def _client(args: argparse.Namespace) -> Iterator[tuple[distributed.Client, int]]:
    """The Dask client, and the library threads each file gets."""
    import distributed

    from warpcrypt import _native

    if args.scheduler_file and not os.path.isfile(args.scheduler_file):
        # Dask's client would wait for the file for ever.
        raise FileNotFoundError(errno.ENOENT, f"no scheduler file {args.scheduler_file}: start the scheduler with "
                                              f"dask scheduler --scheduler-file {args.scheduler_file}")
    if args.scheduler or args.scheduler_file:
        client = distributed.Client(args.scheduler, scheduler_file=args.scheduler_file)  # type: ignore[no-untyped-call]
        with client:
            yield client, args.threads
        return
    # One Dask thread per worker process: the library runs its own threads
    # under each file, so the usable CPUs are shared out between workers.
    cpus = _native.default_threads()
    workers = args.workers or cpus
    cluster = distributed.LocalCluster(n_workers=workers, threads_per_worker=1)  # type: ignore[no-untyped-call]
    with cluster, distributed.Client(cluster) as client:  # type: ignore[no-untyped-call]
        yield client, args.threads or max(1, cpus // workers)


def _run_job(args: argparse.Namespace) -> int:
    from warpcrypt.dask._jobs import decrypt_files, encrypt_files
    from warpcrypt.dask._keyring import KeyFile

    progress = sys.stderr.isatty() if args.progress is None else args.progress
    # Absolute: the workers resolve the path from folders of their own.
    key: MasterKey = KeyFile(os.path.abspath(args.key_file)) if args.workers_read_key else _read_key(args.key_file)
    options = {"key": key, "root": args.root, "suffix": args.suffix, "manifest": args.manifest,
               "backend": args.backend, "progress": progress}
    if args.task_bytes is not None:
        options["task_bytes"] = args.task_bytes
    paths = _paths(args.inputs)
    with _client(args) as (client, threads):
        if args.command == "encrypt":
            report = encrypt_files(paths, args.out, client=client, threads=threads, cipher=args.cipher,
                                   chunk_size=args.chunk_size, **options)
        else:
            report = decrypt_files(paths, args.out, client=client, threads=threads,
                                   source_manifest=args.source_manifest,
                                   trust_unauthenticated_manifest=args.trust_unauthenticated_manifest, **options)
    print(report.summary())
    if args.json:
        # The MAC is not in to_dict(), which the manifest itself stores.
        Path(args.json).write_text(json.dumps({**report.to_dict(), "manifest_mac": report.manifest_mac},
                                              indent=1) + "\n")
    return 0 if report.ok else EXIT_FAILED_FILES


def _derive_key(args: argparse.Namespace) -> int:
    from warpcrypt.dask._kdf import derive_file_key
    from warpcrypt.dask._manifest import PLAIN, ManifestMismatch, read_manifest, recorded_iv

    master_key = _read_key(args.key_file)
    manifest = read_manifest(args.manifest, master_key,
                             trust_unauthenticated_manifest=args.trust_unauthenticated_manifest)
    cipher = manifest["cipher"]
    if manifest["operation"] != "encrypt" or cipher is None:
        raise ManifestMismatch(f"{args.manifest} records a {manifest['operation']} job: give the encryption's manifest")
    # A key for an identifier the job never had opens nothing: `open` would
    # then blame tampering.
    if args.identifier not in manifest["files"]:
        stripped = args.identifier.removesuffix(manifest["suffix"])
        hint = f"give it without the suffix: {stripped}" if stripped in manifest["files"] else \
            "an identifier is the file's path relative to the input root, as the manifest's \"files\" list it"
        raise ManifestMismatch(f"{args.identifier} is not in the manifest {args.manifest}: {hint}")
    derived = derive_file_key(master_key, args.identifier, job_id=bytes.fromhex(manifest["job_id"]),
                              cipher=cipher)
    if manifest["format"] == PLAIN:
        # Shaped for the command line: warpcrypt enc -d -<cipher> $(...) -in ... -out ...
        print(f"-K {derived.key.hex()} -iv {recorded_iv(manifest, args.identifier).hex()}")
    elif args.out:
        # Written as the library writes a key: a new file, 0600, renamed into
        # place, never over the master key file or the manifest it read.
        with contextlib.ExitStack() as held:
            read = [held.enter_context(open(path, "rb")) for path in (args.key_file, args.manifest)
                    if os.path.isfile(path)]
            with _output(args.out, read, secret=True) as file:
                file.write(derived.key)
    else:
        print(derived.key.hex())
    return 0


def _one_line(error: BaseException) -> str:
    """The error on one line; its class leads where the message alone might
    not say what went wrong (the library's, OSError's, ValueError's and ImportError's do)."""
    text = " ".join(str(error).split())
    if text and isinstance(error, (OSError, warpcrypt.Error, ValueError, ImportError)):
        return text
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command != "derive-key" and not args.verbose:
        # Dask reads this when it is first imported, here and in the local
        # cluster's worker processes: its warnings would bury the one line.
        os.environ.setdefault("DASK_LOGGING__DISTRIBUTED", "critical")
    try:
        if args.command == "derive-key":
            return _derive_key(args)
        from warpcrypt.dask import require_extra

        require_extra()
        return _run_job(args)
    except KeyboardInterrupt:
        print("warpcrypt-dask: interrupted; run the same command again to finish the job", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception as error:  # every failure is one line: the job did not run
        print(f"warpcrypt-dask: error: {_one_line(error)}", file=sys.stderr)
        return EXIT_ERROR
