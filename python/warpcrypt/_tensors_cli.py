"""warpcrypt-tensors: CryptoTensors files from the command line.

    warpcrypt-tensors keygen KEYS.json [--alg aes256gcm] [--enc-kid ID] [--sign-kid ID]
    warpcrypt-tensors inspect FILE [--keys KEYS.json] [--json]
    warpcrypt-tensors encrypt PLAIN OUT --keys KEYS.json [--tensors a,b] [--version 2] [--chunk-size N]
    warpcrypt-tensors decrypt FILE OUT --keys KEYS.json
    warpcrypt-tensors rewrap FILE --keys OLD.json --new-keys NEW.json [-o OUT]

Keys are JWK files: one JWK, a list of them or a JWK Set, as
warpcrypt.safetensors takes them (keygen writes one, readable by its owner
only). Outputs are written atomically, never over a file the command reads
(FILE or a keys file: rewrap without -o replaces FILE). encrypt, decrypt and
rewrap count the bytes of tensor data done on stderr, on a line of each step
(``reading``, then ``encrypting``, say), when stderr is a terminal or with
--progress; --no-progress keeps them quiet. A failure prints one line and exits
with the status kinds of the `warpcrypt` CLI: 2 a usage error or a bad key,
3 a file that cannot be read or written, 4 a file that does not verify or
decrypt or is not a safetensors file, 1 anything else.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from typing import Any

from warpcrypt import _cryptotensors as ct
from warpcrypt import safetensors as ws
from warpcrypt._files import reading
from warpcrypt._progress_line import ProgressLine
from warpcrypt.exceptions import FormatError, InvalidArgument, InvalidKey, InvalidTag, Unsupported

PROGRAM = "warpcrypt-tensors"


def _keys(path: str) -> Any:
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except json.JSONDecodeError as error:
        raise InvalidKey(f"{path} is not JSON: {error}") from None


def keygen(args: argparse.Namespace) -> None:
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


def inspect(args: argparse.Namespace) -> None:
    keys = _keys(args.keys) if args.keys else None
    with open(args.file, "rb") as stream:
        size = os.fstat(stream.fileno()).st_size
        if keys is None:
            header = ct.read_unverified(stream, size)
        else:
            header, _ = ct.read_file(stream, size, ct.KeySet(keys))
    # With keys, read_file has verified the signature over these claims;
    # without, they are shown as the file's claims, their syntax checked.
    claims = ct.read_claims(header) if header.encrypted else None
    verified = claims is not None and keys is not None
    report = {
        "file": args.file,
        "format": f"CryptoTensors version {claims.version}" if claims else "safetensors",
        "verified": verified,
        "chunk_size": claims.chunk_size if claims else None,
        "master_key": claims.enc.to_json() if claims else None,
        "signing_key": claims.sign.to_json() if claims else None,
        "metadata": header.user_metadata(),
        "tensors": [{"name": e.name, "dtype": e.dtype, "shape": list(e.shape), "bytes": e.nbytes,
                     "encrypted": claims is not None and e.name in claims.sealed}
                    for e in header.entries],
        "data_bytes": header.data_length,
    }
    if args.json:
        print(json.dumps(report, indent=1))
        return
    # Names and metadata are the file's: shown as reprs, which escape every
    # character that is not printable, so that no header can forge a line of
    # this report or send the terminal a control sequence.
    print(f"{args.file}: {report['format']}, {len(header.entries)} tensors, {header.data_length} bytes of data")
    if claims is not None:
        state = "verified" if verified else "NOT verified (no --keys): what follows is the file's unchecked claim"
        print(f"signature: {state}")
        print(f"master key: {report['master_key']}  signing key: {report['signing_key']}  "
              f"chunk size: {report['chunk_size']}")
    for tensor in report["tensors"]:
        mark = "encrypted" if tensor["encrypted"] else "clear"
        print(f"  {tensor['name']!r}  {tensor['dtype']}{tensor['shape']}  {tensor['bytes']} bytes  {mark}")
    if report["metadata"]:
        print(f"metadata: {report['metadata']!r}")


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


def encrypt(args: argparse.Namespace) -> None:
    keys = _keys(args.keys)
    metadata, tensors = ws._load_raw(args.file, None, _progress(args, "reading"))
    chosen = [name for name in args.tensors.split(",") if name] if args.tensors else None
    ws.save_file(tensors, args.output, keys=keys, metadata=metadata, encrypt=chosen, version=args.version,
                 chunk_size=args.chunk_size, progress=_progress(args, "encrypting"))


def decrypt(args: argparse.Namespace) -> None:
    metadata, tensors = ws._load_raw(args.file, _keys(args.keys), _progress(args, "decrypting"))
    ws.save_file(tensors, args.output, keys=None, metadata=metadata, progress=_progress(args, "writing"))


def rewrap(args: argparse.Namespace) -> None:
    ws.rewrap_file(args.file, keys=_keys(args.keys), new_keys=_keys(args.new_keys), output=args.output,
                   progress=_progress(args, "rewrapping"))


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog=PROGRAM, description="CryptoTensors (encrypted safetensors) files.")
    commands = top.add_subparsers(dest="command", required=True)
    command = commands.add_parser("keygen", help="write a new master key and signing key (a JWK Set)")
    command.add_argument("keys_file", metavar="KEYS.json")
    command.add_argument("--alg", default="aes256gcm", help="aes256gcm (default), aes128gcm or chacha20poly1305")
    command.add_argument("--enc-kid", help="the master key's id, named in the files it encrypts")
    command.add_argument("--sign-kid", help="the signing key's id")
    command.set_defaults(run=keygen)
    command = commands.add_parser("inspect", help="the header: tensors, keys, format; verified with --keys")
    command.add_argument("file")
    command.add_argument("--keys", help="JWK file: verify the signature and unwrap the keys")
    command.add_argument("--json", action="store_true", help="one JSON object")
    command.set_defaults(run=inspect)
    command = commands.add_parser("encrypt", help="a plain safetensors file into a CryptoTensors file")
    command.add_argument("file")
    command.add_argument("output")
    command.add_argument("--keys", required=True)
    command.add_argument("--tensors", help="comma-separated names to encrypt (default: all)")
    command.add_argument("--version", default="2", choices=ct.VERSIONS)
    command.add_argument("--chunk-size", type=int, default=ct.DEFAULT_CHUNK_SIZE)
    _add_progress_argument(command)
    command.set_defaults(run=encrypt)
    command = commands.add_parser("decrypt", help="a CryptoTensors file into a plain safetensors file")
    command.add_argument("file")
    command.add_argument("output")
    command.add_argument("--keys", required=True)
    _add_progress_argument(command)
    command.set_defaults(run=decrypt)
    command = commands.add_parser("rewrap", help="new master and signing keys, the tensor data untouched")
    command.add_argument("file")
    command.add_argument("--keys", required=True, help="the keys that open the file now")
    command.add_argument("--new-keys", required=True)
    command.add_argument("-o", "--output", help="write here instead of replacing FILE")
    _add_progress_argument(command)
    command.set_defaults(run=rewrap)
    return top


def _add_progress_argument(command: argparse.ArgumentParser) -> None:
    command.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                         help="show the bytes done on stderr (default: on a terminal)")


def _files_read(args: argparse.Namespace) -> list[str]:
    """The files the command reads, which its output may not be: FILE and
    the key files. rewrap without -o replaces FILE, as it says it does."""
    read = [getattr(args, name, None) for name in ("keys", "new_keys")]
    if args.run is not rewrap or args.output is not None:
        read.append(getattr(args, "file", None))
    return [path for path in read if path is not None]


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        with contextlib.ExitStack() as held:
            opened = [held.enter_context(open(path, "rb")) for path in _files_read(args)] \
                if args.run is not inspect else []
            with reading(*opened):
                args.run(args)
    except (InvalidTag, FormatError) as error:
        return _fail(error, 4)
    except (InvalidArgument, InvalidKey, Unsupported, ValueError) as error:
        return _fail(error, 2)
    except OSError as error:
        return _fail(error, 3)
    except Exception as error:  # one line for anything else, never a traceback
        return _fail(error, 1)
    return 0


def _fail(error: BaseException, status: int) -> int:
    if isinstance(error, OSError) and error.filename is not None:
        message = f"{error.filename}: {error.strerror or error}"
    else:
        message = str(error) or type(error).__name__
    print(f"{PROGRAM}: {message}", file=sys.stderr)
    return status


if __name__ == "__main__":
    sys.exit(main())
