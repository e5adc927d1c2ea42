"""The sealed-file mutation suite, tests/attack/sealed_mutations.py, in its
quick mode against the CLI under test (and the warpcrypt package of this
interpreter): thousands of truncated, extended, reordered, spliced and
bit-flipped files, each opened whole and over ranges through -in, stdin and a
pipe, none of them wrongly accepted, crashing, hanging, leaving files behind
or failing with other than one error line; the unmodified files must open.

The suite runs as a child process, as it does by hand, so that its report is
exactly what `.venv/bin/python tests/attack/sealed_mutations.py` prints."""

from __future__ import annotations

from pathlib import Path

from wc_support import run_mutation_suite

SUITE = Path(__file__).resolve().parents[1] / "attack" / "sealed_mutations.py"
# Quick mode makes about 7,600 opens; far fewer means cases were lost.
MIN_OPENS = 5000
# About a minute on two idle cores; generous for a loaded CI machine.
TIMEOUT_S = 900


def test_quick_mutation_suite_finds_no_problem(warpcrypt_binary, tmp_path):
    run_mutation_suite(SUITE, warpcrypt_binary, tmp_path, TIMEOUT_S, MIN_OPENS)
