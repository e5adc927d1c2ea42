"""Writes the seed corpus of age_pq_fuzzer (tests/fuzz/corpus/age_pq).

    .venv/bin/python tests/fuzz/make_age_pq_corpus.py tests/fuzz/corpus/age_pq

From the Python reference of tests/cli/test_age_pq_reference.py: the
fuzzer's identity (seed bytes 0..31) and its recipient, a header with an
mlkem768x25519 stanza wrapping the file key 16 x 0x42 for it, and one with
that stanza beside an X25519 one. The encapsulation is random, so each run
writes different stanza bytes.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cli"))
import test_age_pq_reference as reference  # noqa: E402

out = Path(sys.argv[1])
out.mkdir(parents=True, exist_ok=True)
seed = bytes(range(32))
key = reference.HybridKey(seed)
file_key = bytes([0x42]) * 16
(out / "identity").write_text(reference.bech32_encode("AGE-SECRET-KEY-PQ-", seed))
(out / "recipient").write_text(reference.bech32_encode("age1pq", key.public))
enc, body = reference.reference_wrap(key.public, file_key)
stanza = ("mlkem768x25519", [reference.b64(enc)], body)
(out / "header").write_bytes(reference.age_file([stanza], file_key, b"")[:-16 - 16])
x25519 = ("X25519", [reference.b64(bytes(range(1, 33)))], bytes(32))
(out / "header-two-stanzas").write_bytes(reference.age_file([x25519, stanza], file_key, b"")[:-16 - 16])
