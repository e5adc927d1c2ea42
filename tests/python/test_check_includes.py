"""scripts/check-includes.py, the CI check that keeps the layers' rules:
it passes on the tree as it is, and fails, naming the file and the rule,
where a file breaks one (checked on a copy of the sources)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """The checker and the sources it reads, copied."""
    (tmp_path / "scripts").mkdir()
    shutil.copy(ROOT / "scripts" / "check-includes.py", tmp_path / "scripts")
    for folder in ("src", "tools", "python/src", "python/warpcrypt"):
        shutil.copytree(ROOT / folder, tmp_path / folder, ignore=shutil.ignore_patterns("*.so", "__pycache__"))
    (tmp_path / "docs").mkdir()
    shutil.copy(ROOT / "docs" / "architecture.md", tmp_path / "docs")
    return tmp_path


def check(tree: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(tree / "scripts" / "check-includes.py")], capture_output=True,
                          text=True)


def test_the_tree_passes(tree: Path) -> None:
    result = check(tree)
    assert result.returncode == 0, result.stdout


@pytest.mark.parametrize("line", [
    "static_assert(sizeof(options.backend) > 0);",
    "int x = one_lane_options.threads;",
    "void f(wc_options *options) { options->devices = nullptr; }",
    "void f(wc_options copy) { copy.backend = WC_BACKEND_CPU; }",
    "void f(const wc_options &o) { return o.streams; }",
])
def test_placement_fields_outside_placement_fail(tree: Path, line: str) -> None:
    target = tree / "src" / "engine" / "aead_stream.cpp"
    target.write_text(target.read_text() + "\n" + line + "\n")
    result = check(tree)
    assert result.returncode == 1
    assert "src/engine/aead_stream.cpp:" in result.stdout
    assert "placement is decided in src/engine/placement.cpp alone" in result.stdout


def test_placement_fields_in_a_comment_pass(tree: Path) -> None:
    target = tree / "src" / "engine" / "aead_stream.cpp"
    target.write_text(target.read_text() + "\n// options.backend, as placement resolved it\n")
    assert check(tree).returncode == 0


def test_a_layer_reaching_up_fails(tree: Path) -> None:
    target = tree / "src" / "core" / "padding.cpp"
    target.write_text('#include "engine/placement.h"\n' + target.read_text())
    result = check(tree)
    assert result.returncode == 1
    assert "src/core/padding.cpp:1:" in result.stdout


def test_an_environment_variable_outside_the_table_fails(tree: Path) -> None:
    target = tree / "src" / "engine" / "placement.cpp"
    target.write_text(target.read_text() + '\nconst char *extra = std::getenv("WARPCRYPT_SECRET_KNOB");\n')
    result = check(tree)
    assert result.returncode == 1
    assert "WARPCRYPT_SECRET_KNOB: not in the environment table" in result.stdout


def test_a_table_row_no_code_reads_fails(tree: Path) -> None:
    table = tree / "docs" / "architecture.md"
    table.write_text(table.read_text().replace(
        "| `WARPCRYPT_HYBRID_TRACE=1` |",
        "| `WARPCRYPT_GONE=1` | `src/engine/placement.cpp` | nothing |\n| `WARPCRYPT_HYBRID_TRACE=1` |"))
    result = check(tree)
    assert result.returncode == 1
    assert "WARPCRYPT_GONE: the environment table says src/engine/placement.cpp reads it, and it does not" \
        in result.stdout



@pytest.mark.parametrize("table", ["kCpuBackend", "kCudaBackend", "kHostCrypto"])
@pytest.mark.parametrize("format_file", ["src/age/age_keys.cpp", "src/sealed/sealed_job.cpp"])
def test_a_format_naming_a_table_fails(tree: Path, table: str, format_file: str) -> None:
    target = tree / format_file
    target.write_text(target.read_text() + f"\nconst void *table = &{table};\n")
    result = check(tree)
    assert result.returncode == 1
    assert f"{format_file}:" in result.stdout and f"{table}: only api" in result.stdout, result.stdout


@pytest.mark.parametrize("read", [
    'const char *home = std::getenv("HOME");',
    'const char *home = secure_getenv("HOME");',
    'constexpr const char *kHome = "HOME";\nconst char *home = getenv(kHome);',
    'constexpr std::string_view kNames[] = {"HOME", "TERM"};\nvoid f() { for (char **e = environ; *e; ++e) {} }',
])
def test_any_variable_outside_the_table_fails(tree: Path, read: str) -> None:
    target = tree / "src" / "engine" / "placement.cpp"
    target.write_text(target.read_text() + f"\n{read}\n")
    result = check(tree)
    assert result.returncode == 1
    assert "src/engine/placement.cpp:" in result.stdout
    assert "HOME" in result.stdout and "not in the environment table" in result.stdout, result.stdout


@pytest.mark.parametrize("read", ["const char *value = std::getenv(name.c_str());",
                                  "void f() { for (char **e = environ; *e; ++e) {} }"])
def test_a_read_the_checker_cannot_name_fails(tree: Path, read: str) -> None:
    target = tree / "src" / "engine" / "placement.cpp"
    target.write_text(target.read_text() + f"\n{read}\n")
    result = check(tree)
    assert result.returncode == 1
    assert "the checker cannot tell which variable it reads" in result.stdout, result.stdout


def test_a_variable_read_where_the_table_says_passes(tree: Path) -> None:
    table = tree / "docs" / "architecture.md"
    table.write_text(table.read_text().replace(
        "| `WARPCRYPT_HYBRID_TRACE=1` |",
        "| `WARPCRYPT_TEST_VARIABLE` | `src/engine/placement.cpp` | a test's |\n| `WARPCRYPT_HYBRID_TRACE=1` |"))
    target = tree / "src" / "engine" / "placement.cpp"
    target.write_text(target.read_text() + '\nconstexpr char kName[] = "WARPCRYPT_TEST_VARIABLE";\n'
                      "const char *value = std::getenv(kName);\n")
    assert "WARPCRYPT_TEST_VARIABLE" not in check(tree).stdout


@pytest.mark.parametrize("call", ["nonce = os.urandom(12)", "mac = hmac.digest(key, data, 'sha256')",
                                  "key = secrets.token_bytes(32)", "key = hashlib.pbkdf2_hmac('sha256', p, s, 1)",
                                  "os.replace(staged, target)", "os.rename(staged, target)",
                                  "shutil.move(staged, target)"])
def test_a_python_module_going_around_the_library_fails(tree: Path, call: str) -> None:
    module = tree / "python" / "warpcrypt" / "zarr.py"
    module.write_text(module.read_text() + f"\n{call}\n")
    result = check(tree)
    assert result.returncode == 1 and "python/warpcrypt/zarr.py" in result.stdout, result.stdout
    assert "_random.py" in result.stdout


def test_a_bypass_named_in_a_comment_passes(tree: Path) -> None:
    module = tree / "python" / "warpcrypt" / "zarr.py"
    module.write_text(module.read_text() + "\n# never os.urandom(12): the library's source\n")
    assert check(tree).returncode == 0
