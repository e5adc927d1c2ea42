"""Reads the NIST CAVP response files and the RFC files that
cryptography-vectors reformats into the same shape: `[ENCRYPT]`/`[DECRYPT]`
sections of `NAME = VALUE` records, each record starting at `COUNT`."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Record:
    section: str  # "ENCRYPT", "DECRYPT", or "" before any section header
    line: int
    fields: dict[str, str] = field(default_factory=dict)

    def hex(self, name: str) -> bytes:
        return bytes.fromhex(self.fields[name])


def read_records(path: Path) -> list[Record]:
    records: list[Record] = []
    section = ""
    current: Record | None = None
    for number, raw in enumerate(path.read_text().splitlines(), start=1):
        line = raw.strip()
        if not line:
            current = None
            continue
        if line.startswith("#"):
            continue
        if line in ("[ENCRYPT]", "[DECRYPT]"):
            section = line.strip("[]")
            current = None
            continue
        name, equals, value = line.partition("=")
        if not equals:
            raise ValueError(f"{path.name} line {number} is not NAME = VALUE: {line}")
        name = name.strip()
        if current is None or name == "COUNT":
            current = Record(section, number)
            records.append(current)
        current.fields[name] = value.strip()
    return records
