#!/usr/bin/env python3
"""Executed warp instructions per SASS opcode, from Nsight Compute's source
page of one kernel (`ncu -i REPORT --page source --print-source sass --csv`):
what the kernel spends its issue slots on (docs/lab-notes/performance-history.md).

    bench/sass_opcode_counts.py SOURCE.csv [TOP]
"""
import collections
import csv
import sys


def opcode(source):
    """The opcode of a SASS line without its modifiers or predicate."""
    words = source.split()
    if words and words[0].startswith("@"):
        words = words[1:]
    return words[0].split(".")[0] if words else ""


def executed_per_opcode(path):
    with open(path, newline="") as file:
        rows = list(csv.reader(file))
    for at, header in enumerate(rows):
        executed = [i for i, name in enumerate(header) if name.startswith("Instructions Executed")]
        if "Source" in header and executed:
            source, count = header.index("Source"), executed[0]
            break
    else:
        sys.exit(f"{path}: no source page with executed instructions")
    totals = collections.Counter()
    for row in rows[at + 1:]:
        if len(row) <= count or not opcode(row[source]):
            continue
        try:
            totals[opcode(row[source])] += float(row[count].replace(",", ""))
        except ValueError:
            continue
    return totals


def main():
    totals = executed_per_opcode(sys.argv[1])
    top = int(sys.argv[2]) if len(sys.argv) > 2 else 25
    everything = sum(totals.values())
    print(f"total warp instructions {int(everything)}")
    for name, executed in totals.most_common(top):
        print(f"{name:12s} {int(executed):12d} {100 * executed / everything:5.1f}%")


if __name__ == "__main__":
    main()
