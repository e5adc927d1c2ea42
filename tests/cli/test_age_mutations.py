"""The age mutation suite, tests/attack/age_mutations.py, in its quick mode
against the CLI under test: truncated, extended, reordered, spliced,
bit-flipped and re-lined age files (binary from warpcrypt and from age, and
armored), each decrypted whole from a file and a pipe and over ranges, none
of them wrongly accepted, crashing, hanging, leaving files behind or failing
with other than one error line; the unmodified files must decrypt.

The suite runs as a child process, as it does by hand, so that its report is
exactly what `.venv/bin/python tests/attack/age_mutations.py` prints."""

from __future__ import annotations

from pathlib import Path

from wc_support import run_mutation_suite

SUITE = Path(__file__).resolve().parents[1] / "attack" / "age_mutations.py"
# Quick mode makes about 640 opens; far fewer means cases were lost.
MIN_OPENS = 500
TIMEOUT_S = 600


def test_quick_age_mutation_suite_finds_no_problem(warpcrypt_binary, tmp_path):
    run_mutation_suite(SUITE, warpcrypt_binary, tmp_path, TIMEOUT_S, MIN_OPENS)
