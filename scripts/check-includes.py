#!/usr/bin/env python3
"""Reads every #include in src/, tools/ and python/src/ and fails on any that
breaks the dependency rule of docs/architecture.md:

    api -> sealed, age -> engine -> core <- backends (cpu, cuda)

A layer may include its own folder and the folders below it; a backend only
core; nothing includes a backend (everything reaches them through the
tables of core/backend_tables.h); the CLI and the Python binding only the public
headers of include/. (The build checks the same rule for calls: each layer
links alone on the layers below it, src/CMakeLists.txt.) These rules keep who
reaches what:

- third-party headers: OpenSSL and libsodium only in backends/cpu (the CPU
  backend and the host-crypto provider), CUDA's only in backends/cuda,
  CLI11 only in the CLI and nanobind only in the Python binding, but for
  the files THIRD_PARTY_EXCEPTIONS names, each with its reason;
- tables: only the api and the engine name a backend's table, kCpuBackend
  or kCudaBackend (placement is theirs; a format runs on the engine), and
  only the api names kHostCrypto (the formats take their HostCrypto, and so
  their randomness, from it);
- placement: in the library, only src/engine/placement.cpp reads or sets
  wc_options' placement fields (backend, threads, devices, streams, chunk
  size), so that where work runs is decided in one place; wc_options_init
  sets their defaults;
- the environment: every variable the library reads, whatever its name, is
  in the table of docs/architecture.md ("The environment") with the file
  that reads it, and every variable of that table is read where the table
  says. A read is a getenv or secure_getenv of a literal or of a constant
  of the same file, or a use of environ, which reads the names of the
  file's constant arrays of names; a '*' in a name stands for any run of
  characters, and a row that is no variable's name (`<plugin>_*`) for
  names the code computes from environ;
- the Python package's primitives: its modules draw random bytes only from
  the library's source (warpcrypt/_random.py) and compute MACs and KDFs only
  through the library, never with os.urandom, secrets, hmac or hashlib's
  KDFs, so that a seeded test reproduces every format's file; and they put
  files in place only through the library's atomic output (wc_output_open,
  wc_output_move_beneath), never with os.replace, os.rename or shutil.move.

Prints every violation as `file:line: rule` and exits 1 if there is any;
prints the layer graph it found with --graph.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from fnmatch import fnmatchcase
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.MULTILINE)
ANGLE_INCLUDE = re.compile(r"^\s*#\s*include\s+<([^>]+)>", re.MULTILINE)
COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.DOTALL)

# What each layer of src/ may include, besides the public header.
ALLOWED = {
    "api": {"api", "sealed", "age", "engine", "core"},
    "sealed": {"sealed", "engine", "core"},
    "age": {"age", "engine", "core"},
    "engine": {"engine", "core"},
    "core": {"core"},
    "cpu": {"cpu", "core"},
    "cuda": {"cuda", "core"},
}
PUBLIC = "warpcrypt/"
CLIENTS = ("cli", "python")

# The third-party libraries a layer may or may not include, by how their
# headers are named; any other <...> header is the C++ library's or the
# system's.
THIRD_PARTY = {
    "OpenSSL": re.compile(r"openssl/"),
    "libsodium": re.compile(r"sodium(\.h$|/)"),
    "CUDA": re.compile(r"(cuda|cub/|thrust/|nvrtc|curand|cooperative_groups|nvml)"),
    "CLI11": re.compile(r"CLI/"),
    "nanobind": re.compile(r"nanobind/"),
}
THIRD_PARTY_ALLOWED = {
    "cpu": {"OpenSSL", "libsodium"},
    "cuda": {"CUDA"},
    "cli": {"CLI11"},
    "python": {"nanobind"},
}
FOLDER = {"cpu": "src/backends/cpu", "cuda": "src/backends/cuda", "cli": "tools", "python": "python/src"}
# Files that still include a library their layer may not, each with the
# reason. An entry that no longer matches an include fails the check too, so
# the list only shrinks.
THIRD_PARTY_EXCEPTIONS = {
    ("src/core/secret_bytes.h", "OpenSSL"):
        "secure_wipe and the constant-time compare are OPENSSL_cleanse and CRYPTO_memcmp, "
        "inline in every layer; a call through a table per wipe would buy nothing",
    ("src/backends/cuda/aead_keyed.cu", "OpenSSL"):
        "the GPU AEAD computes the one block the host needs before a launch (GCM's H, "
        "ChaCha20-Poly1305's one-time key) with EVP; a backend may not call the CPU backend",
}

# Which layers may name a table, besides core, which declares it, and the
# backend that defines it.
TABLE_USERS = {
    "kCpuBackend": ({"api", "engine"}, "cpu", "placement is the api's and the engine's; a format runs on the engine"),
    "kCudaBackend": ({"api", "engine"}, "cuda", "placement is the api's and the engine's; a format runs on the engine"),
    "kHostCrypto": ({"api"}, "cpu", "the formats take their HostCrypto, and so their randomness, from the api"),
}
# The wc_options fields that place work, and the files that may touch them.
# A wc_options is what a file declares as one (`wc_options lane`, `const
# wc_options &options`, `wc_options *out`), or any name with "options" in it.
PLACEMENT_FIELDS = r"(backend|threads|devices|device_count|streams|chunk_bytes)\b"
OPTIONS_DECLARED = re.compile(r"\bwc_options\s*[&*]?\s*(\w+)")
PLACEMENT_FILES = {
    "src/engine/placement.cpp": "decides where work runs",
    "src/api/library_api.cpp": "wc_options_init sets the defaults",
}
TABLE_NAME = re.compile(r"\b(" + "|".join(TABLE_USERS) + r")\b")
SOURCE_SUFFIXES = {".h", ".cpp", ".cu", ".cuh"}


def layer_of(path: str) -> str | None:
    """src/<layer>/..., or src/backends/<backend>/... for a backend."""
    parts = path.split("/")
    if parts[0] == "src" and len(parts) > 3 and parts[1] == "backends":
        return parts[2]
    if parts[0] == "src" and len(parts) > 2:
        return parts[1]
    if parts[0] == "tools":
        return "cli"
    if parts[0] == "python":
        return "python"
    return None


def included_layer(include: str) -> str:
    """`core/cipher_backend.h` is core, `backends/cpu/kdf.h` is cpu; a bare name is
    the including file's folder."""
    if include.startswith(PUBLIC):
        return "public"
    if include.startswith("backends/"):
        return include.split("/")[1]
    if "/" in include:
        return include.split("/")[0]
    return "same folder"


def sources():
    for folder in ("src", "tools", "python/src"):
        for path in sorted((ROOT / folder).rglob("*")):
            if path.suffix in SOURCE_SUFFIXES:
                yield path.relative_to(ROOT).as_posix(), path.read_text(errors="replace")


def line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def edges():
    for name, text in sources():
        layer = layer_of(name)
        for match in INCLUDE.finditer(text):
            yield name, line_of(text, match.start()), layer, included_layer(match.group(1)), match.group(1)


def third_party_failures(used_exceptions: set):
    for name, text in sources():
        layer = layer_of(name)
        for match in ANGLE_INCLUDE.finditer(text):
            header = match.group(1)
            library = next((lib for lib, pattern in THIRD_PARTY.items() if pattern.match(header)), None)
            if library is None or library in THIRD_PARTY_ALLOWED.get(layer, set()):
                continue
            if (name, library) in THIRD_PARTY_EXCEPTIONS:
                used_exceptions.add((name, library))
                continue
            owners = sorted(FOLDER[where] for where, libs in THIRD_PARTY_ALLOWED.items() if library in libs)
            yield f"{name}:{line_of(text, match.start())}: #include <{header}>: {library} belongs to " + \
                f"{', '.join(owners)} only (or an entry, with its reason, in THIRD_PARTY_EXCEPTIONS)"


def table_failures():
    for name, text in sources():
        layer = layer_of(name)
        # Blank the comments out, keeping their newlines, so a line number
        # still points at the code.
        code = COMMENT.sub(lambda comment: re.sub(r"[^\n]", " ", comment.group(0)), text)
        for match in TABLE_NAME.finditer(code):
            users, definer, why = TABLE_USERS[match.group(1)]
            if layer in users or layer in ("core", definer):
                continue
            yield f"{name}:{line_of(code, match.start())}: {match.group(1)}: only " + \
                f"{', '.join(sorted(users))} may name it: {why}"


def placement_failures():
    for name, text in sources():
        if not name.startswith("src/") or name in PLACEMENT_FILES:
            continue
        code = COMMENT.sub(lambda comment: re.sub(r"[^\n]", " ", comment.group(0)), text)
        names = {"\\w*options\\w*"} | {re.escape(declared) for declared in OPTIONS_DECLARED.findall(code)}
        field = re.compile(r"\b(?:" + "|".join(sorted(names)) + r")(?:\.|->)" + PLACEMENT_FIELDS)
        for match in field.finditer(code):
            yield f"{name}:{line_of(code, match.start())}: wc_options' {match.group(1)}: placement is decided in " + \
                "src/engine/placement.cpp alone; ask it (engine/placement.h)"


ENV_TABLE = ROOT / "docs" / "architecture.md"
ENV_SECTION = re.compile(r"^### The environment\n(.*?)(?=^#)", re.MULTILINE | re.DOTALL)
# A read of the environment: a call of getenv or secure_getenv (std:: or
# not), or a use of environ but its declaration. The variable a call reads is
# its literal, or a constant of the same file bound to one (`constexpr const
# char *kName = "NAME"`, `kName{"NAME"}`) or an array of them (`kNames[] =
# {"HOME", "LC_*"}`, '*' standing for any run of characters); those a file
# takes from environ are the names of its arrays.
ENV_CALL = re.compile(r"\b(?:secure_)?getenv\s*\(")
ENVIRON = re.compile(r"^(?!\s*extern\b).*?\b((?:__)?environ)\b", re.MULTILINE)
VARIABLE = r"[A-Z_][A-Z0-9_*]*"
LITERAL = re.compile(r'"([^"\\]*)"')
CONSTANT = re.compile(r"(?:\w+::)*(\w+)(?:\[[^]]*\])?")
NAME_CONSTANT = re.compile(r'\b(\w+)(?:\[\w*\])?\s*(?:=\s*|\{\s*)"(' + VARIABLE + r')"\s*[;}]')
NAME_ARRAY = re.compile(r"\b(\w+)\s*\[\w*\]\s*=?\s*\{([^{}]*)\}\s*;")
STRING = re.compile(r'"([^"\\]*)"')


def environment_table() -> dict[str, set[str]]:
    """The variables of the environment table, each with the files that read it."""
    section = ENV_SECTION.search(ENV_TABLE.read_text(encoding="utf-8"))
    table: dict[str, set[str]] = {}
    for row in (section.group(1) if section else "").splitlines():
        cells = row.strip().strip("|").split("|")
        if len(cells) < 2:
            continue
        readers = set(re.findall(r"`([^`]+)`", cells[1]))
        for variable in re.findall(r"`([^`=]+)(?:=[^`]*)?`", cells[0]):
            table.setdefault(variable, set()).update(readers)
    return table


def call_argument(code: str, start: int) -> str:
    """The argument of the call whose parenthesis opens at `start`."""
    depth = 0
    for end in range(start, len(code)):
        depth += {"(": 1, ")": -1}.get(code[end], 0)
        if depth == 0:
            return code[start + 1:end].strip()
    return code[start + 1:].strip()


def environment_reads(code: str):
    """(line, variable or None, how) for each read of the environment in a
    file's code; None where the checker cannot tell which variable it is."""
    constants = {name: [variable] for name, variable in NAME_CONSTANT.findall(code)}
    arrays = {}
    for name, body in NAME_ARRAY.findall(code):
        names = STRING.findall(body)
        if names and all(re.fullmatch(VARIABLE, variable) for variable in names):
            arrays[name] = names
    constants.update(arrays)
    for match in ENV_CALL.finditer(code):
        argument = call_argument(code, match.end() - 1)
        literal, constant = LITERAL.fullmatch(argument), CONSTANT.fullmatch(argument)
        variables = [literal.group(1)] if literal else constants.get(constant.group(1)) if constant else None
        for variable in variables or [None]:
            yield line_of(code, match.start()), variable, f"getenv({argument})"
    environ = ENVIRON.search(code)
    if environ:
        line = line_of(code, environ.start(1))
        for variable in [variable for names in arrays.values() for variable in names] or [None]:
            yield line, variable, environ.group(1)


def environment_failures():
    table = environment_table()
    read: set[tuple[str, str]] = set()
    environ_readers: set[str] = set()
    for name, text in sources():
        if not name.startswith("src/"):
            continue
        code = COMMENT.sub(lambda comment: re.sub(r"[^\n]", " ", comment.group(0)), text)
        missing: dict[tuple[int, str], list[str]] = {}
        for line, variable, how in environment_reads(code):
            if how.endswith("environ"):
                environ_readers.add(name)
            if variable is None:
                yield f"{name}:{line}: {how}: the checker cannot tell which variable it reads: name it by a " + \
                    "literal, or a constant of this file (an array of names for environ)"
            elif (name, variable) not in read:
                read.add((name, variable))
                if not any(name in readers and fnmatchcase(variable, row) for row, readers in table.items()):
                    missing.setdefault((line, how), []).append(variable)
        for (line, how), variables in missing.items():
            yield f"{name}:{line}: {how}: {', '.join(variables)}: not in the environment table of " + \
                "docs/architecture.md as read here"
    for row, readers in sorted(table.items()):
        for reader in sorted(readers):
            # A row that is no variable's name (`<plugin>_*`) stands for
            # names the code computes, from what it reads of environ.
            if re.fullmatch(VARIABLE, row):
                found = any(fnmatchcase(variable, row) for file, variable in read if file == reader)
            else:
                found = reader in environ_readers
            if not found:
                yield f"docs/architecture.md: {row}: the environment table says {reader} reads it, and it does not"


PYTHON_PACKAGE = ROOT / "python" / "warpcrypt"
# What the package's modules take from the library instead, by the call
# that would go around it.
PYTHON_BYPASSES = re.compile(r"\b(os\.urandom|secrets\.token_\w+|hmac\.(?:digest|new|HMAC)|"
                             r"hashlib\.(?:pbkdf2_hmac|scrypt)|os\.replace|os\.rename|shutil\.move)\b")
RANDOM_SOURCE = PYTHON_PACKAGE / "_random.py"


def python_primitive_failures():
    for path in sorted(PYTHON_PACKAGE.rglob("*.py")):
        lines = path.read_text(encoding="utf-8").splitlines()
        for number, line in enumerate(lines, 1):
            match = PYTHON_BYPASSES.search(line.split("#", 1)[0])
            if match:
                yield f"{path.relative_to(ROOT)}:{number}: {match.group(1)}: the package draws random bytes from " + \
                    f"{RANDOM_SOURCE.relative_to(ROOT)}, computes MACs and KDFs through the library (_native) " + \
                    "and puts files in place through its atomic output (_native.AtomicOutput, move_beneath)"


def violation(layer: str, target: str) -> str | None:
    if target in ("public", "same folder"):
        return None
    if layer in CLIENTS:
        return "the CLI and the Python binding see only include/warpcrypt"
    allowed = ALLOWED.get(layer)
    if allowed is None:
        return f"src/{layer}/ is no layer of docs/architecture.md"
    if target in allowed:
        return None
    if target in ("cpu", "cuda"):
        return "nothing includes a backend: call it through core/backend_tables.h"
    return f"{layer} may include only {', '.join(sorted(allowed))}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--graph", action="store_true", help="print the layer graph (edge counts)")
    args = parser.parse_args()
    graph: Counter[tuple[str, str]] = Counter()
    failures = []
    for name, line, layer, target, include in edges():
        if layer is not None and target not in ("same folder",):
            graph[(layer, target)] += 1
        why = violation(layer, target) if layer is not None else None
        if why:
            failures.append(f"{name}:{line}: #include \"{include}\": {why}")
    used_exceptions: set = set()
    failures.extend(third_party_failures(used_exceptions))
    for name, library in sorted(set(THIRD_PARTY_EXCEPTIONS) - used_exceptions):
        failures.append(f"{name}: THIRD_PARTY_EXCEPTIONS lets it include {library}, which it no longer does: "
                        "remove the entry")
    failures.extend(table_failures())
    failures.extend(placement_failures())
    failures.extend(environment_failures())
    failures.extend(python_primitive_failures())
    if args.graph:
        for (source, target), count in sorted(graph.items()):
            print(f"{source:>7} -> {target:<7} {count}")
    for failure in failures:
        print(failure)
    if failures:
        print(f"check-includes: {len(failures)} line(s) break the dependency rule (docs/architecture.md)")
        return 1
    print("check-includes: every include follows the dependency rule")
    return 0


if __name__ == "__main__":
    sys.exit(main())
