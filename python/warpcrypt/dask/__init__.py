"""warpcrypt on a Dask cluster: files and arrays encrypted by many workers,
each on its own GPU (or its CPU), every file and chunk under its own key
derived from one master key. docs/dask.md is the guide.

    from distributed import Client
    from warpcrypt.dask import encrypt_files, decrypt_files

    client = Client("tcp://scheduler:8786")
    report = encrypt_files("/data/raw", "/data/sealed", key=master_key)
    print(report.summary())
    decrypt_files("/data/sealed", "/data/restored", key=master_key)

Command line: ``warpcrypt-dask encrypt ...`` or ``python -m warpcrypt.dask``.
"""

from warpcrypt.dask._arrays import EncryptedArray, decrypt_array, encrypt_array
from warpcrypt.dask._jobs import JobReport, WorkerSummary, decrypt_files, encrypt_files
from warpcrypt.dask._kdf import DerivedKey, derive_chunk_key, derive_file_key, hkdf_sha256, key_check_value
from warpcrypt.dask._manifest import MANIFEST_NAME, ManifestMismatch, read_manifest

__all__ = [
    "MANIFEST_NAME",
    "DerivedKey",
    "EncryptedArray",
    "JobReport",
    "ManifestMismatch",
    "WorkerSummary",
    "decrypt_array",
    "decrypt_files",
    "derive_chunk_key",
    "derive_file_key",
    "encrypt_array",
    "encrypt_files",
    "hkdf_sha256",
    "key_check_value",
    "read_manifest",
]
