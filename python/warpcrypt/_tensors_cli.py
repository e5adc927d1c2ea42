"""`warpcrypt tensors`: CryptoTensors files from the command line.

    warpcrypt tensors keygen KEYS.json [--alg aes256gcm] [--enc-kid ID] [--sign-kid ID]
    warpcrypt tensors inspect FILE [--keys KEYS]
    warpcrypt tensors encrypt PLAIN OUT --keys KEYS [--tensors a,b] [--version 2] [--chunk-size N]
    warpcrypt tensors decrypt FILE OUT --keys KEYS
    warpcrypt tensors rewrap FILE --keys KEYS --new-keys NEW [-o OUT]

FILE (and PLAIN) may also be a sharded checkpoint's folder, or its
model.safetensors.index.json; OUT is then a folder, written in the same
shards (warpcrypt.safetensors' save_state_dict layout: each encrypted shard
bound to the index).

The `warpcrypt` CLI runs this module's console script, `warpcrypt-tensors`,
which is also a command of its own under that name. KEYS is a key file (a
JWK Set, one JWK or a list of them), ``env`` (the JWK Set in
$CRYPTOTENSOR_KEYS, as cryptotensors reads it) or ``env:NAME``: what
``keys=`` takes (warpcrypt._tensor_keys). keygen writes a key file readable
by its owner only. Outputs are written atomically, never over a file the
command reads (FILE or a key file: rewrap without -o replaces FILE).
encrypt, decrypt and rewrap count the bytes of tensor data done on stderr,
on a line of each step (``reading``, then ``encrypting``, say), when stderr
is a terminal or with --progress; --no-progress keeps them quiet.

A failure prints one line and exits with the status of its kind, as the
`warpcrypt` CLI does (docs/cli.md): 2 usage (a bad option, or a key missing
or of the wrong type), 3 a file that cannot be read or written, 4 a file
that does not verify or decrypt or is not a safetensors file, 5 no device,
1 anything else. With --json, every command prints one line of JSON on
stdout instead of its text and of the error line, shaped as the CLI's.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import time
from typing import Any, NoReturn

from warpcrypt import _cryptotensors as ct
from warpcrypt import safetensors as ws
from warpcrypt._files import _output, reading
from warpcrypt._progress_line import ProgressLine
from warpcrypt._tensor_keys import key_file
from warpcrypt.safetensors import _sharded
from warpcrypt.exceptions import BackendUnavailable, FormatError, InvalidTag, NoDevice, Unsupported

# The `warpcrypt` CLI names itself here when it runs this tool, so that
# help and errors say what the user typed.
PROGRAM_VARIABLE = "WARPCRYPT_TENSORS_PROG"
KEYS_HELP = ("a key file (JWK Set), env (the JWK Set in $CRYPTOTENSOR_KEYS, as cryptotensors reads it) or env:NAME "
             "(in $NAME)")

# The `warpcrypt` CLI's kinds of failure and their exit statuses
# (tools/cli/cli_error.h), and the errors of each kind as the library sorts
# their statuses (wc_status_kind_of): a file that is not in the format does
# not open, as a wrong tag does. The first match decides, since a
# FormatError is a ValueError too.
EXIT_STATUSES = {"ok": 0, "failure": 1, "usage": 2, "io": 3, "auth": 4, "no_device": 5}
ERROR_KINDS: tuple[tuple[type[BaseException] | tuple[type[BaseException], ...], str], ...] = (
    ((InvalidTag, FormatError), "auth"),
    ((NoDevice, BackendUnavailable), "no_device"),
    (OSError, "io"),
    ((ValueError, Unsupported), "usage"),
)


class UsageError(Exception):
    """A command line that does not parse: one line, exit 2."""


class _Parser(argparse.ArgumentParser):
    """argparse, with its refusals as one line (the usage is one --help
    away, as in the `warpcrypt` CLI) rather than the usage and an exit."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see '{self.prog} --help')")


def keygen(args: argparse.Namespace) -> dict[str, Any]:
    keys = ws.generate_keys(alg=args.alg, enc_kid=args.enc_kid, sign_kid=args.sign_kid)
    text = json.dumps(keys, indent=1).encode() + b"\n"
    # Created for its owner alone, and never over an existing key file.
    fd = os.open(args.keys_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        view = memoryview(text)
        while view:
            view = view[os.write(fd, view):]
        os.fsync(fd)
    except BaseException:
        os.unlink(args.keys_file)
        raise
    finally:
        os.close(fd)
    master, signer = ct.KeySet(keys).writing_keys()
    return {"file": args.keys_file, "master_key": master.name.to_json(), "signing_key": signer.name.to_json()}


def inspect(args: argparse.Namespace) -> dict[str, Any]:
    if not _is_checkpoint(args.file):
        report = _inspect_file(args.file, args.keys)
    else:
        report = _inspect_checkpoint(args.file, args.keys)
    if not args.json:
        for shard in report.get("shards", [report]):
            _print_inspection(shard)
    return report


def _is_checkpoint(path: str) -> bool:
    """Whether `path` names a sharded checkpoint (its folder or index)
    rather than one file."""
    return os.path.isdir(path) or path.endswith(".index.json")


def _inspect_checkpoint(path: str, keys: ct.KeySet | None) -> dict[str, Any]:
    """Each shard's report, after the checkpoint as a whole is checked
    (with keys, every shard's binding to the index)."""
    if keys is not None:
        _sharded.open_checkpoint(path, keys).close()
    paths = _sharded.checkpoint_paths(path)
    shards = [_inspect_file(shard, keys) for shard in (paths[1:] or paths)]
    return {"file": path, "format": f"sharded checkpoint of {len(shards)} files", "verified": keys is not None and
            all(shard["verified"] for shard in shards), "shards": shards,
            "data_bytes": sum(shard["data_bytes"] for shard in shards)}


def _inspect_file(path: str, keys: ct.KeySet | None) -> dict[str, Any]:
    with open(path, "rb") as stream:
        size = os.fstat(stream.fileno()).st_size
        if keys is None:
            header = ct.read_unverified(stream, size)
        else:
            header, _ = ct.read_file(stream, size, keys)
    # With keys, read_file has verified the signature over these claims;
    # without, they are shown as the file's claims, their syntax checked.
    claims = ct.read_claims(header) if header.encrypted else None
    return {
        "file": path,
        "format": f"CryptoTensors version {claims.version}" if claims else "safetensors",
        "verified": claims is not None and keys is not None,
        "chunk_size": claims.chunk_size if claims else None,
        "master_key": claims.enc.to_json() if claims else None,
        "signing_key": claims.sign.to_json() if claims else None,
        "metadata": header.user_metadata(),
        "tensors": [{"name": e.name, "dtype": e.dtype, "shape": list(e.shape), "bytes": e.nbytes,
                     "encrypted": claims is not None and e.name in claims.sealed}
                    for e in header.entries],
        "data_bytes": header.data_length,
    }


def _print_inspection(report: dict[str, Any]) -> None:
    # Names and metadata are the file's: shown as reprs, which escape every
    # character that is not printable, so that no header can forge a line of
    # this report or send the terminal a control sequence.
    print(f"{report['file']}: {report['format']}, {len(report['tensors'])} tensors, {report['data_bytes']} bytes "
          "of data")
    if report["master_key"] is not None:
        state = ("verified" if report["verified"]
                 else "NOT verified (no --keys): what follows is the file's unchecked claim")
        print(f"signature: {state}")
        print(f"master key: {report['master_key']}  signing key: {report['signing_key']}  "
              f"chunk size: {report['chunk_size']}")
    for tensor in report["tensors"]:
        mark = "encrypted" if tensor["encrypted"] else "clear"
        print(f"  {tensor['name']!r}  {tensor['dtype']}{tensor['shape']}  {tensor['bytes']} bytes  {mark}")
    if report["metadata"]:
        print(f"metadata: {report['metadata']!r}")


class _Transfer:
    """What encrypt, decrypt and rewrap report, in the fields of the CLI's
    --json: the bytes read and written, the time, and the rate of reading."""

    def __init__(self, source: str) -> None:
        self._bytes_in = _size(source)  # before rewrap replaces it
        self._started = time.perf_counter()

    def report(self, output: str) -> dict[str, Any]:
        seconds = time.perf_counter() - self._started
        return {"bytes_in": self._bytes_in, "bytes_out": _size(output), "seconds": round(seconds, 6),
                "gbps": round(self._bytes_in / seconds / 1e9, 3) if seconds > 0 else 0.0}


def _size(path: str) -> int:
    """A file's bytes, or a checkpoint's, its every file's."""
    paths = _sharded.checkpoint_paths(path) if _is_checkpoint(path) else [path]
    return sum(os.path.getsize(each) for each in paths)


def _progress(args: argparse.Namespace, verb: str) -> ws.Progress | None:
    """The callback that draws a step's progress line, or None where the
    line is not shown (by default, when stderr is not a terminal)."""
    shown = sys.stderr.isatty() if args.progress is None else args.progress
    if not shown:
        return None
    line = ProgressLine(verb)

    def draw(done: int, total: int) -> None:
        line.draw(done, total, last=done == total)

    return draw


def encrypt(args: argparse.Namespace) -> dict[str, Any]:
    transfer = _Transfer(args.file)
    chosen = [name for name in args.tensors.split(",") if name] if args.tensors else None
    options = {"version": args.version, "chunk_size": args.chunk_size, "progress": _progress(args, "encrypting")}
    if _is_checkpoint(args.file):
        if chosen is not None:
            raise ValueError("--tensors takes a file: a checkpoint's shards are encrypted whole, each bound to "
                             "its index")
        _convert_checkpoint(args, None, args.keys, **options)
    else:
        metadata, tensors = ws._load_raw(args.file, None, _progress(args, "reading"))
        ws.save_file(tensors, args.output, keys=args.keys, metadata=metadata, encrypt=chosen, **options)
    return transfer.report(args.output)


def decrypt(args: argparse.Namespace) -> dict[str, Any]:
    transfer = _Transfer(args.file)
    if _is_checkpoint(args.file):
        _convert_checkpoint(args, args.keys, None, progress=_progress(args, "writing"))
    else:
        metadata, tensors = ws._load_raw(args.file, args.keys, _progress(args, "decrypting"))
        ws.save_file(tensors, args.output, keys=None, metadata=metadata, progress=_progress(args, "writing"))
    return transfer.report(args.output)


def _convert_checkpoint(args: argparse.Namespace, keys: ct.KeySet | None, new_keys: ct.KeySet | None,
                        **options: Any) -> None:
    """The checkpoint at args.file, opened with `keys`, written to the
    folder args.output in the same shards under `new_keys`."""
    tensors, checkpoint = _sharded.load_laid_out(args.file, keys=keys, framework="raw", device="cpu",
                                                 progress=_progress(args, "reading"))
    shards, metadata, shard_metadata = checkpoint.layout()
    _sharded.write(tensors, args.output, shards, keys=new_keys, metadata=metadata, shard_metadata=shard_metadata,
                   **options)


def rewrap(args: argparse.Namespace) -> dict[str, Any]:
    transfer = _Transfer(args.file)
    if _is_checkpoint(args.file):
        _rewrap_checkpoint(args)
    else:
        ws.rewrap_file(args.file, keys=args.keys, new_keys=args.new_keys, output=args.output,
                       progress=_progress(args, "rewrapping"))
    return transfer.report(args.output if args.output is not None else args.file)


def _rewrap_checkpoint(args: argparse.Namespace) -> None:
    """Every shard rewrapped (its binding to the index, in its signed
    metadata, kept), after the checkpoint as a whole is checked, each into
    the library's atomic output of its target: itself, or with -o the same
    name in the new folder, where the index is copied too. No output is
    committed before every shard has been rewrapped, so a failure leaves
    the checkpoint as it was."""
    _sharded.open_checkpoint(args.file, args.keys).close()
    paths = _sharded.checkpoint_paths(args.file)
    index, shards = (paths[0], paths[1:]) if len(paths) > 1 else (None, paths)
    progress = _progress(args, "rewrapping")

    def target(path: str) -> str:
        return path if args.output is None else os.path.join(args.output, os.path.basename(path))

    if args.output is not None:
        os.makedirs(args.output, exist_ok=True)
    with contextlib.ExitStack() as outputs:
        for shard in shards:
            ws.rewrap_file(shard, keys=args.keys, new_keys=args.new_keys,
                           output=outputs.enter_context(_output(target(shard))), progress=progress)
        if index is not None and args.output is not None:
            with open(index, "rb") as source:
                outputs.enter_context(_output(target(index))).write(source.read())


def parser(program: str = "warpcrypt-tensors") -> argparse.ArgumentParser:
    top = _Parser(prog=program, description="Encrypted safetensors (CryptoTensors files): inspect, encrypt, "
                  "decrypt and rewrap them, and make their keys.",
                  epilog=f"KEYS is {KEYS_HELP}. Exit status: 0 ok, 1 failure, 2 usage or a key missing or of the "
                  "wrong type, 3 a file that cannot be read or written, 4 a file that does not verify or decrypt, "
                  "5 no device.")
    commands = top.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(name: str, run: Any, summary: str) -> argparse.ArgumentParser:
        added = commands.add_parser(name, help=summary, description=summary[:1].upper() + summary[1:] + ".")
        added.set_defaults(run=run)
        added.add_argument("--json", action="store_true",
                           help="one line of JSON on stdout (a failure too, in place of the error line)")
        return added

    added = command("keygen", keygen, "write a new master key and signing key (a JWK Set)")
    added.add_argument("keys_file", metavar="KEYS.json")
    added.add_argument("--alg", default="aes256gcm", help="aes256gcm (default), aes128gcm or chacha20poly1305")
    added.add_argument("--enc-kid", help="the master key's id, named in the files it encrypts")
    added.add_argument("--sign-kid", help="the signing key's id")
    added = command("inspect", inspect, "the header: tensors, keys, format; verified with --keys")
    added.add_argument("file")
    added.add_argument("--keys", metavar="KEYS", help=f"verify the signature and unwrap the keys: {KEYS_HELP}")
    added = command("encrypt", encrypt, "a plain safetensors file into a CryptoTensors file")
    added.add_argument("file")
    added.add_argument("output")
    added.add_argument("--keys", metavar="KEYS", required=True, help=KEYS_HELP)
    added.add_argument("--tensors", help="comma-separated names to encrypt (default: all)")
    added.add_argument("--version", default="2", choices=ct.VERSIONS)
    added.add_argument("--chunk-size", type=int, default=ct.DEFAULT_CHUNK_SIZE)
    _add_progress_argument(added)
    added = command("decrypt", decrypt, "a CryptoTensors file into a plain safetensors file")
    added.add_argument("file")
    added.add_argument("output")
    added.add_argument("--keys", metavar="KEYS", required=True, help=KEYS_HELP)
    _add_progress_argument(added)
    added = command("rewrap", rewrap, "new master and signing keys, the tensor data untouched")
    added.add_argument("file")
    added.add_argument("--keys", metavar="KEYS", required=True, help=f"the keys that open the file now: {KEYS_HELP}")
    added.add_argument("--new-keys", metavar="KEYS", required=True, help="the keys to wrap and sign with")
    added.add_argument("-o", "--output", help="write here instead of replacing FILE")
    _add_progress_argument(added)
    return top


def _add_progress_argument(command: argparse.ArgumentParser) -> None:
    command.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                         help="show the bytes done on stderr (default: on a terminal)")


def _read_keys(args: argparse.Namespace) -> list[str]:
    """Reads the keys the command names (--keys, --new-keys), before any
    other file, so that a key missing or of the wrong type fails before a
    long read; returns the key files among their sources."""
    files = []
    for name in ("keys", "new_keys"):
        source = getattr(args, name, None)
        if source is not None:
            files.append(key_file(source))
            setattr(args, name, ct.KeySet(source))
    return [path for path in files if path is not None]


def _files_read(args: argparse.Namespace, key_files: list[str]) -> list[str]:
    """The files the command reads, which its output may not be: FILE (a
    checkpoint's every file) and the key files. rewrap without -o replaces
    FILE, as it says it does."""
    read = list(key_files)
    if hasattr(args, "file") and (args.run is not rewrap or args.output is not None):
        read += _sharded.checkpoint_paths(args.file) if _is_checkpoint(args.file) else [args.file]
    return read


def main(argv: list[str] | None = None) -> int:
    program = os.environ.get(PROGRAM_VARIABLE, "warpcrypt-tensors")
    try:
        args = parser(program).parse_args(argv)
    except UsageError as error:
        print(f"{program}: {error}", file=sys.stderr)
        return EXIT_STATUSES["usage"]
    name = f"tensors {args.command}"
    try:
        with contextlib.ExitStack() as held:
            read = _files_read(args, _read_keys(args))
            held.enter_context(reading(*[held.enter_context(open(path, "rb")) for path in read]))
            report = args.run(args)
    except Exception as error:  # one line for anything, never a traceback
        return _fail(program, name, args.json, error)
    if args.json:
        _print_json({"command": name, "ok": True, **report})
    return EXIT_STATUSES["ok"]


def _fail(program: str, name: str, as_json: bool, error: Exception) -> int:
    kind = next((kind for classes, kind in ERROR_KINDS if isinstance(error, classes)), "failure")
    if isinstance(error, OSError) and error.filename is not None:
        message = f"{error.filename}: {error.strerror or error}"
    else:
        message = str(error) or type(error).__name__
    if as_json:
        _print_json({"command": name, "ok": False, "kind": kind, "exit": EXIT_STATUSES[kind], "message": message})
    else:
        print(f"{program}: {message}", file=sys.stderr)
    return EXIT_STATUSES[kind]


def _print_json(report: dict[str, Any]) -> None:
    print(json.dumps(report, separators=(",", ":")), flush=True)


if __name__ == "__main__":
    sys.exit(main())
