"""warpcrypt on a Dask cluster: files (local or on any fsspec file system,
such as s3://) and arrays encrypted by many workers, each on its own GPU (or
its CPU), every file and chunk under its own key, which the worker derives
from the master key it holds. docs/dask.md is the guide.

    from distributed import Client
    from warpcrypt.dask import encrypt_files, decrypt_files

    client = Client("tcp://scheduler:8786")
    report = encrypt_files("s3://bucket/raw", "s3://bucket/sealed", key=master_key)
    print(report.summary())
    decrypt_files("s3://bucket/sealed", "/data/restored", key=master_key)

Command line: ``warpcrypt-dask encrypt ...`` or ``python -m warpcrypt.dask``.

The names below load on first use, so that the command can tell a user
without the ``dask`` extra how to install it instead of failing on import.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

INSTALL_HINT = 'warpcrypt.dask needs the "dask" extra: pip install "warpcrypt[dask]" (dask, distributed, bokeh)'

# Where each public name lives.
_EXPORTS = {
    "EncryptedArray": "_arrays", "decrypt_array": "_arrays", "encrypt_array": "_arrays",
    "JobReport": "_jobs", "WorkerSummary": "_jobs", "compute_job": "_jobs", "decrypt_files": "_jobs",
    "encrypt_files": "_jobs",
    "DerivedKey": "_kdf", "derive_chunk_key": "_kdf", "derive_file_key": "_kdf", "hkdf_sha256": "_kdf",
    "key_check_value": "_kdf",
    "InstalledKey": "_keyring", "KeyFile": "_keyring", "KeyNotHeld": "_keyring", "install_key": "_keyring",
    "MANIFEST_SUFFIX": "_manifest", "ManifestMismatch": "_manifest", "ManifestNotAuthentic": "_manifest",
    "manifest_beside": "_manifest", "read_manifest": "_manifest",
}

__all__ = sorted(_EXPORTS)

# The packages the extra installs (and theirs), by their import names.
_EXTRA_MODULES = {"dask", "distributed", "fsspec", "numpy", "toolz", "cloudpickle"}


def require_extra() -> None:
    """Imports what the extra installs; raises ImportError with INSTALL_HINT
    where something is missing."""
    try:
        import dask.array  # noqa: F401
        import distributed  # noqa: F401
        import fsspec  # type: ignore[import-untyped]  # noqa: F401
    except ImportError as error:
        if (error.name or "").split(".")[0] in _EXTRA_MODULES:
            raise ImportError(INSTALL_HINT, name=error.name) from None
        raise


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    require_extra()
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)


def __dir__() -> list[str]:
    return __all__


# The names for type checkers. "name as name" marks each as a re-export:
# mypy --strict takes no other import for one, and cannot read the computed
# __all__ above.
if TYPE_CHECKING:
    from warpcrypt.dask._arrays import (
        EncryptedArray as EncryptedArray,
        decrypt_array as decrypt_array,
        encrypt_array as encrypt_array,
    )
    from warpcrypt.dask._jobs import (
        JobReport as JobReport,
        WorkerSummary as WorkerSummary,
        compute_job as compute_job,
        decrypt_files as decrypt_files,
        encrypt_files as encrypt_files,
    )
    from warpcrypt.dask._kdf import (
        DerivedKey as DerivedKey,
        derive_chunk_key as derive_chunk_key,
        derive_file_key as derive_file_key,
        hkdf_sha256 as hkdf_sha256,
        key_check_value as key_check_value,
    )
    from warpcrypt.dask._keyring import (
        InstalledKey as InstalledKey,
        KeyFile as KeyFile,
        KeyNotHeld as KeyNotHeld,
        install_key as install_key,
    )
    from warpcrypt.dask._manifest import (
        MANIFEST_SUFFIX as MANIFEST_SUFFIX,
        ManifestMismatch as ManifestMismatch,
        ManifestNotAuthentic as ManifestNotAuthentic,
        manifest_beside as manifest_beside,
        read_manifest as read_manifest,
    )
