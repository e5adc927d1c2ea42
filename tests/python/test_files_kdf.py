"""seal_file / open_file with a passphrase: Argon2id by default, PBKDF2 when
asked for (or when only ``iterations`` is given), and open_file's limits on
the costs a header may ask for. Costs stay tiny (one pass over 64 KiB): the
library's defaults and bounds are covered by its own tests."""

from __future__ import annotations

import pytest

import warpcrypt

CHEAP = {"kdf_ops": 1, "kdf_memory": 64 << 10}


@pytest.fixture
def plain(tmp_path, rng):
    data = rng.randbytes(5000)
    path = tmp_path / "plain"
    path.write_bytes(data)
    return path, data


def test_argon2id_is_the_default_and_round_trips(plain, tmp_path):
    source, data = plain
    warpcrypt.seal_file(source, tmp_path / "sealed", passphrase="pw", **CHEAP)
    info = warpcrypt.sealed_info(tmp_path / "sealed")
    assert (info.kdf, info.kdf_ops, info.kdf_memory, info.digest, info.iterations) == ("argon2id", 1, 64 << 10,
                                                                                         None, 0)
    warpcrypt.open_file(tmp_path / "sealed", tmp_path / "back", passphrase="pw")
    assert (tmp_path / "back").read_bytes() == data


@pytest.mark.parametrize("arguments", [{"kdf": "pbkdf2", "iterations": 1000}, {"iterations": 1000}])
def test_pbkdf2_by_name_or_by_iterations(plain, tmp_path, arguments):
    source, _ = plain
    warpcrypt.seal_file(source, tmp_path / "sealed", passphrase="pw", **arguments)
    info = warpcrypt.sealed_info(tmp_path / "sealed")
    assert (info.kdf, info.iterations, info.digest, info.kdf_ops, info.kdf_memory) == ("pbkdf2", 1000, "sha256", 0, 0)


@pytest.mark.parametrize("arguments, message", [
    ({"kdf": "scrypt"}, "kdf must be"),
    ({"kdf": "argon2id", "iterations": 1000}, "iterations and digest are PBKDF2's"),
    ({"digest": "sha512"}, "iterations and digest are PBKDF2's"),
    ({"kdf": "pbkdf2", "kdf_ops": 2}, "Argon2id's, not PBKDF2's"),
    ({"kdf_ops": 0, "kdf_memory": 64 << 10}, "at least one pass"),
    ({"kdf_ops": 1, "kdf_memory": 1000}, "whole number of KiB"),
])
def test_kdf_arguments_that_cannot_apply_are_refused(plain, tmp_path, arguments, message):
    source, _ = plain
    with pytest.raises(warpcrypt.InvalidArgument, match=message):
        warpcrypt.seal_file(source, tmp_path / "sealed", passphrase="pw", **arguments)
    assert not (tmp_path / "sealed").exists()


def test_open_file_bounds_the_argon2id_costs_a_header_may_ask_for(plain, tmp_path):
    source, data = plain
    warpcrypt.seal_file(source, tmp_path / "sealed", passphrase="pw", kdf_ops=5, kdf_memory=16 << 10)
    with pytest.raises(warpcrypt.FormatError, match="more Argon2id passes"):
        warpcrypt.open_file(tmp_path / "sealed", tmp_path / "back", passphrase="pw")
    with pytest.raises(warpcrypt.FormatError, match="more Argon2id memory"):
        warpcrypt.open_file(tmp_path / "sealed", tmp_path / "back", passphrase="pw", max_kdf_ops=5,
                            max_kdf_memory=8 << 10)
    assert not (tmp_path / "back").exists()
    warpcrypt.open_file(tmp_path / "sealed", tmp_path / "back", passphrase="pw", max_kdf_ops=5)
    assert (tmp_path / "back").read_bytes() == data
