"""docs/performance.md and the README's table of figures are what
scripts/performance-page.py writes from docs/bench/: a results file that
changes without the page, or a page edited by hand, fails here. Rewrite
both with `python3 scripts/performance-page.py`.

Standard library and pytest only; warpcrypt is not imported."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "performance-page.py"
# names that hold digits without being figures: ciphers, key types, devices, files, JSON keys,
# the unit GB/s is defined in, escapes
IDENTIFIERS = (r"python3|utf-8|X25519|10\^9|device_64_mib_in_place|host_16_byte_call|cuda:\d|aes-\d+-\w+|chacha20(-poly1305)?|salsa20|[\w.-]*h[12]00[\w.-]*|[\w.-]+\.json"
               r"|\\[dnw]|\{\d[^}]*\}|\^#\{1,6\}")


def write_page(tmp_path: Path) -> tuple[str, str]:
    page, readme = tmp_path / "performance.md", tmp_path / "README.md"
    subprocess.run([sys.executable, str(SCRIPT), "--page-out", str(page), "--readme-out", str(readme)],
                   check=True, cwd=tmp_path, timeout=60)
    return page.read_text(encoding="utf-8"), readme.read_text(encoding="utf-8")


def test_page_is_what_the_script_writes(tmp_path):
    page, _ = write_page(tmp_path)
    assert page == (ROOT / "docs" / "performance.md").read_text(encoding="utf-8"), \
        "docs/performance.md differs from scripts/performance-page.py's output: rerun the script"


def test_readme_figures_are_what_the_script_writes(tmp_path):
    _, readme = write_page(tmp_path)
    assert readme == (ROOT / "README.md").read_text(encoding="utf-8"), \
        "README.md's figures block differs from scripts/performance-page.py's output: rerun the script"


def test_same_results_same_page(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    assert write_page(tmp_path / "a") == write_page(tmp_path / "b")


def test_script_holds_no_figure():
    # Numbers may appear in the script only as code (indices, formats, regular
    # expressions), never in the page's prose: every string literal of the
    # page's text is free of digits, except format specifiers and patterns.
    text = SCRIPT.read_text(encoding="utf-8")
    code = re.sub(r'"""(.*?)"""', "", text, flags=re.S)
    for literal in re.findall(r'(?<![rR])f?"((?:[^"\\\n]|\\.)*)"', code):
        bare = re.sub(r"\{[^}]*\}", "", literal)
        bare = re.sub(IDENTIFIERS, "", bare)
        assert not re.search(r"\d", bare), f"a number in the script's text: {literal!r}"


def test_links_into_the_lab_notes_resolve(tmp_path):
    page, _ = write_page(tmp_path)
    notes = (ROOT / "docs" / "lab-notes" / "performance-history.md").read_text(encoding="utf-8")
    anchors = set()
    seen: dict[str, int] = {}
    in_code = False
    for line in notes.splitlines():
        if line.startswith("```"):
            in_code = not in_code
        m = None if in_code else re.match(r"^#{1,6} (.*)$", line)
        if m:
            slug = re.sub(r"[^\w\- ]", "", m.group(1).strip().lower()).replace(" ", "-")
            n = seen.get(slug, 0)
            seen[slug] = n + 1
            anchors.add(slug if n == 0 else f"{slug}-{n}")
    links = re.findall(r"\]\(lab-notes/performance-history\.md#([^)]*)\)", page)
    assert links
    for anchor in links:
        assert anchor in anchors, anchor
    for image in re.findall(r"!\[[^\]]*\]\(([^)]*)\)", page):
        assert (ROOT / "docs" / image).is_file(), image


def page_module(monkeypatch, current: Path):
    """The script as a module, its current run read from and written to `current`."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("performance_page", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setattr(module, "CURRENT", current)
    return module


def write_run(folder: Path, commit: str, **files: dict) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        (folder / f"{name}.json").write_text(json.dumps({"run": {"commit": commit}, **data}), encoding="utf-8")


def test_take_joins_the_two_figures_steps(tmp_path, monkeypatch):
    # `figures` wrote the engine's parts in two calls; `figures-python` the rest.
    module = page_module(monkeypatch, tmp_path / "current")
    write_run(tmp_path / "a", "abc1234", engine_figures={"cli": {"bytes": 1}, "sealed": {"bytes": 2}})
    write_run(tmp_path / "b", "abc1234", engine_figures={"age": {"bytes": 3}}, python_overhead={"python": "3"},
              dask={"files": 4}, safetensors={"rows": []})
    module.take([tmp_path / "a", tmp_path / "b"])
    engine = json.loads((tmp_path / "current" / "engine_figures.json").read_text(encoding="utf-8"))
    assert {part: engine[part]["bytes"] for part in ("cli", "sealed", "age")} == {"cli": 1, "sealed": 2, "age": 3}
    assert sorted(p.name for p in (tmp_path / "current").iterdir()) == sorted(module.CURRENT_FILES)


def test_take_refuses_files_of_two_commits(tmp_path, monkeypatch):
    module = page_module(monkeypatch, tmp_path / "current")
    write_run(tmp_path / "a", "abc1234", engine_figures={}, python_overhead={})
    write_run(tmp_path / "b", "def5678", dask={}, safetensors={})
    with pytest.raises(SystemExit, match="different commits"):
        module.take([tmp_path / "a", tmp_path / "b"])
    assert not (tmp_path / "current").exists()


def test_take_names_what_is_missing(tmp_path, monkeypatch):
    module = page_module(monkeypatch, tmp_path / "current")
    write_run(tmp_path / "a", "abc1234", engine_figures={}, python_overhead={}, safetensors={})
    with pytest.raises(SystemExit, match=r"no dask\.json"):
        module.take([tmp_path / "a"])
    assert not (tmp_path / "current").exists()


def test_take_refuses_a_file_twice(tmp_path, monkeypatch):
    # Only the engine's figures come in parts; two Dask runs are a mistake.
    module = page_module(monkeypatch, tmp_path / "current")
    write_run(tmp_path / "a", "abc1234", engine_figures={}, python_overhead={}, dask={}, safetensors={})
    write_run(tmp_path / "b", "abc1234", dask={})
    with pytest.raises(SystemExit, match="dask.json is in more than one"):
        module.take([tmp_path / "a", tmp_path / "b"])
