#!/usr/bin/env python3
"""Writes docs/performance.md, and the README's table of figures, from the
benchmarks' results in docs/bench/.

Every number on the page is read from a results file in docs/bench/ (JSON,
and the sweep's CSV for the GPU kernels). The README's table and the page's
first section come from one device run, `scripts/gpu-check.sh figures`,
whose files (docs/bench/current/) each record that run's device, date and
commit (bench/run_record.py); `--take DIR` copies such a run's files there.
Where an earlier run's file does not record its date, commit or device, the
page takes them from the lab-notes section that describes that run
(docs/lab-notes/performance-history.md), read when the page is written, and
says so. This script holds no figure of its own. The same files give the
same page.

    python3 scripts/performance-page.py --take gpu-out/figures   # a device run's figures become the current run
    python3 scripts/performance-page.py            # rewrite docs/performance.md and README.md's table
    python3 scripts/performance-page.py --check    # exit 1 if either differs from what it would write
    python3 scripts/performance-page.py --page-out F --readme-out G   # write elsewhere (the test does)

Standard library only.
"""

from __future__ import annotations

import argparse
import csv
import json
import statistics
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "docs" / "bench"
NOTES = ROOT / "docs" / "lab-notes" / "performance-history.md"
NOTES_LINK = "lab-notes/performance-history.md"
CURRENT = BENCH / "current"
# The current run's files, as `scripts/gpu-check.sh figures` names them.
CURRENT_FILES = ("engine_figures.json", "python_overhead.json", "dask.json", "safetensors.json")
README_BEGIN = "<!-- figures:begin -->"
README_END = "<!-- figures:end -->"


# -- reading ----------------------------------------------------------------

def load(name: str):
    with open(BENCH / name, encoding="utf-8") as f:
        return json.load(f)


class LabNotes:
    """The lab notes' sections by heading, with GitHub's anchors."""

    def __init__(self, path: Path) -> None:
        self.sections: list[tuple[str, str, str]] = []  # heading, anchor, body
        seen: dict[str, int] = {}
        heading, body = None, []
        in_code = False
        for line in path.read_text(encoding="utf-8").splitlines() + ["# end"]:
            if line.startswith("```"):
                in_code = not in_code
            m = None if in_code else re.match(r"^#{1,6} (.*)$", line)
            if not m:
                body.append(line)
                continue
            if heading is not None:
                self.sections.append((heading, self._anchor(heading, seen), "\n".join(body)))
            heading, body = m.group(1).strip(), []

    @staticmethod
    def _anchor(heading: str, seen: dict[str, int]) -> str:
        """GitHub's: lower case, punctuation dropped, spaces to hyphens, -N on repeats."""
        slug = re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        return slug if n == 0 else f"{slug}-{n}"

    def find(self, prefix: str) -> tuple[str, str, str]:
        hits = [s for s in self.sections if s[0].startswith(prefix)]
        if len(hits) != 1:
            raise SystemExit(f"lab notes: {len(hits)} sections start with {prefix!r}")
        return hits[0]

    def link(self, prefix: str) -> str:
        heading, anchor, _ = self.find(prefix)
        return f"[{heading.replace('`', '')}]({NOTES_LINK}#{anchor})"

    def grab(self, prefix: str, pattern: str) -> str:
        """The first group of `pattern` in a section's heading and text."""
        heading, _, body = self.find(prefix)
        m = re.search(pattern, heading + "\n" + body)
        if not m:
            raise SystemExit(f"lab notes: {pattern!r} not found under {prefix!r}")
        return " ".join(m.group(1).split())


# -- formatting -------------------------------------------------------------

def gbs(x: float) -> str:
    return f"{x:.2f}"


def gbs_span(values: list[float]) -> str:
    """The range of `values` in GB/s, one figure where both ends print alike."""
    return "–".join(dict.fromkeys(gbs(v) for v in (min(values), max(values))))


def table(head: list[str], rows: list[list[str]]) -> list[str]:
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return out


def size(nbytes: float) -> str:
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if nbytes >= 1 << shift and nbytes % (1 << shift) == 0:
            return f"{int(nbytes) >> shift} {unit}"
    return f"{int(nbytes)} B"


def gib(x: float) -> str:
    return f"{x:g} GiB"


# -- the areas --------------------------------------------------------------

def gpu_kernels(notes: LabNotes) -> list[str]:
    with open(BENCH / "sweep-h100.csv", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    device = sorted({r["device"] for r in rows if r["device"] != "cpu"})
    pick = [("aes-128-ctr", "encrypt"), ("aes-256-ctr", "encrypt"), ("aes-128-cbc", "decrypt"),
            ("aes-256-cfb", "decrypt"), ("chacha20", "encrypt"), ("salsa20", "encrypt")]
    by = {(r["cipher"], r["direction"], r["series"], int(r["bytes"])): float(r["median_gbps"]) for r in rows}
    body = []
    for cipher, direction in pick:
        sizes = [set(b for (c, d, s, b) in by if (c, d, s) == (cipher, direction, series))
                 for series in ("cpu-all", "gpu", "gpu+io")]
        n = max(set.intersection(*sizes))
        body.append([cipher, direction, size(n), gbs(by[cipher, direction, "cpu-all", n]),
                     gbs(by[cipher, direction, "gpu", n]), gbs(by[cipher, direction, "gpu+io", n])])
    commits = notes.grab("Every mode, every key size", r"\(commits ([^)]*)\)")
    ladder = "GPU kernels, device-resident"
    return [
        "## Every mode and size: an earlier sweep",
        "",
        f"Device: {', '.join(device)}. From `docs/bench/sweep-h100.csv`, at the largest size that all three",
        "series share. The CSV records no date or commit; the lab notes' "
        + notes.link("Every mode, every key size") + f" names the commits: {commits}.",
        "",
        *table(["cipher", "direction", "size", "CPU, all cores, GB/s", "GPU kernel, device-resident, GB/s",
                "GPU with transfers both ways, GB/s"], body),
        "",
        "Reproduce: `python3 bench/sweep.py --out bench-results && python3 bench/plot.py bench-results/sweep.csv`"
        " (`scripts/gpu-check.sh bench`).",
        "",
        "The kernels have become faster since this sweep: their figures now are the current run's"
        " ([the current run](#the-current-run)), and the steps between are in the lab notes' "
        + notes.link(ladder) + ".",
        "",
        "![throughput against message size, every series](bench/throughput_vs_size.png)",
        "",
    ]


# -- the current run ----------------------------------------------------------

def current(name: str) -> dict:
    return load(f"current/{name}")


def machine(run: dict) -> str:
    gpus = [g["name"] for g in run["gpus"]]
    drivers = sorted({g["driver"] for g in run["gpus"]})
    named = f"{len(gpus)} × {gpus[0]}" if len(set(gpus)) == 1 and len(gpus) > 1 else ", ".join(gpus) or "no GPU"
    driver = f" (driver {', '.join(drivers)})" if drivers else ""
    return f"{named}{driver}, {run['cores']} cores ({run['cpu']})"


def source(name: str) -> str:
    d = current(name)
    run = d["run"]
    rebuilt = ", rebuilt from the run's log" if "from_log" in d else ""
    return f"`docs/bench/current/{name}`, {run['date']}, commit {run['commit']}{rebuilt}"


def current_intro() -> list[str]:
    files = {name: current(name) for name in CURRENT_FILES}
    runs = [d["run"] for d in files.values()]
    (commit,) = {r["commit"] for r in runs}
    dates = sorted({r["date"] for r in runs})
    # A file rebuilt from the lines its benchmark printed (a device machine
    # that did not return the JSON) names the log and says why.
    logs = {name: d["from_log"] for name, d in files.items() if "from_log" in d}
    reasons = sorted({d["rebuilt_because"] for d in files.values() if "from_log" in d})
    rebuilt = [] if not logs else [
        ", ".join(f"`{name}`" for name in logs) + " were rebuilt from the lines their benchmarks printed ("
        + ", ".join(logs.values()) + "): " + "; ".join(reasons) + "."]
    return [
        "## The current run",
        "",
        "Every figure in this section, and in the README's table, comes from one run of"
        f" `scripts/gpu-check.sh figures` and `figures-python` at commit {commit}, {' and '.join(dates)}, on"
        f" {machine(runs[0])}: its files are in `docs/bench/current/`, each recording that run."
        + "".join(" " + line for line in rebuilt) + " Rerun both steps on a GPU machine, and"
        " `python3 scripts/performance-page.py --take gpu-out/figures` makes their figures the current run.",
        "The sections after this one are earlier runs, each with its own device, date and commit.",
        "",
    ]


def current_kernels() -> list[str]:
    k = current("engine_figures.json")["kernels"]
    body = [[cipher, gbs(v)] for cipher, v in k["gbps"].items()]
    return [
        f"### GPU kernels, {size(k['bytes'])} in device memory",
        "",
        f"`warpcrypt speed --backend gpu --resident device`, the median of its timed runs: {source('engine_figures.json')}.",
        "An AEAD's figure includes its tag.",
        "",
        *table(["cipher", "GB/s"], body),
        "",
    ]


def current_backends() -> list[str]:
    e = current("engine_figures.json")
    cores = e["run"]["cores"]
    body = []
    for cipher, part in sorted(e["backends"].items()):
        r = part["gbps"]
        for memory in ("pinned", "pageable"):
            ossl = gbs(r["openssl-multi"]) if memory == "pinned" else ""
            body.append([cipher, memory, gbs(r["cpu-" + memory]), gbs(r["gpu-" + memory]),
                         gbs(r["hybrid-" + memory]), ossl])
    sizes = {part["bytes"] for part in e["backends"].values()}
    return [
        "### Backends: cpu, gpu and hybrid",
        "",
        f"`warpcrypt speed` on {'/'.join(size(n) for n in sorted(sizes))} calls from host memory back to host memory,"
        f" by backend, the median of its timed runs: {source('engine_figures.json')}.",
        "",
        *table(["cipher", "host memory", "cpu, GB/s", "gpu, GB/s", "hybrid, GB/s",
                f"`openssl speed -multi {cores}`, GB/s"], body),
        "",
        "Chunk size and stream count of the GPU lanes were chosen from an earlier sweep (`docs/bench/engine_sweep.csv`,"
        " the lab notes' " + "{sweep_link}" + "):",
        "",
        "![throughput against chunk size, one line per stream count](bench/engine_sweep.png)",
        "",
    ]


def median_note(part: dict) -> str:
    runs = {c["runs"] for c in part["commands"].values()}
    return f"the median of {'/'.join(map(str, sorted(runs)))} timed runs after a warm-up, the commands in turns"


CLI_ROWS = [
    ("cat", "`cat f > /dev/null`"),
    ("openssl-devnull", "`openssl enc`, to `/dev/null`"),
    ("warpcrypt-auto-devnull", "`warpcrypt enc` (auto), to `/dev/null`"),
    ("warpcrypt-cpu-devnull", "`warpcrypt enc --backend cpu`, to `/dev/null`"),
    ("warpcrypt-gpu-devnull", "`warpcrypt enc --backend gpu`, to `/dev/null`"),
    ("warpcrypt-hybrid-devnull", "`warpcrypt enc --backend hybrid`, to `/dev/null`"),
    ("cp", "`cp f g`"),
    ("openssl-file", "`openssl enc`, to a file"),
    ("warpcrypt-auto-file", "`warpcrypt enc` (auto), to a file"),
    ("warpcrypt-cpu-file", "`warpcrypt enc --backend cpu`, to a file"),
]


def current_cli() -> list[str]:
    c = current("engine_figures.json")["cli"]
    body = []
    for key, label in CLI_ROWS:
        r = c["commands"][key]
        ref = c["commands"]["openssl-" + ("devnull" if key.endswith("devnull") else "file")]
        ratio = f"{ref['seconds'] / r['seconds']:.1f}×" if key.startswith("warpcrypt") else ""
        body.append([label, f"{r['seconds']:.3f} ({r['min_seconds']:.3f}–{r['max_seconds']:.3f})",
                     gbs(r["gbps"]), ratio])
    return [
        "### The CLI against `openssl enc`",
        "",
        f"`warpcrypt enc -{c['cipher']}` against `openssl enc`, `cat` and `cp` on one {size(c['bytes'])} file in the"
        f" page cache, wall seconds with process start, {median_note(c)}: {source('engine_figures.json')}.",
        "",
        *table(["command", "seconds (fastest–slowest)", "GB/s", "against `openssl enc`"], body),
        "",
    ]


def current_sealed() -> list[str]:
    s = current("engine_figures.json")["sealed"]
    cmd = s["commands"]
    body = []
    for name, label in (("enc-aes-256-ctr", "`warpcrypt enc -aes-256-ctr`"),
                        ("seal-aes-256-gcm", "`warpcrypt seal -aes-256-gcm`"),
                        ("open-aes-256-gcm", "`warpcrypt open` (aes-256-gcm)"),
                        ("enc-chacha20", "`warpcrypt enc -chacha20`"),
                        ("seal-chacha20-poly1305", "`warpcrypt seal -chacha20-poly1305`"),
                        ("open-chacha20-poly1305", "`warpcrypt open` (chacha20-poly1305)")):
        gpu = [gbs(cmd[f"{name}-{b}-devnull"]["gbps"]) if f"{name}-{b}-devnull" in cmd else ""
               for b in ("gpu", "hybrid")]
        body.append([label, gbs(cmd[name + "-devnull"]["gbps"]), *gpu, gbs(cmd[name + "-file"]["gbps"])])
    return [
        "### Sealed files",
        "",
        f"`seal` and `open` against `enc` on one {size(s['bytes'])} file in the page cache, key file, wall time with"
        f" process start, {median_note(s)}: {source('engine_figures.json')}.",
        "",
        *table(["command", "auto, to `/dev/null`, GB/s", "gpu, to `/dev/null`, GB/s", "hybrid, to `/dev/null`, GB/s",
                "auto, to a file, GB/s"], body),
        "",
    ]


def current_age() -> list[str]:
    a = current("engine_figures.json")["age"]
    cmd = a["commands"]
    body = []
    for direction in ("encrypt", "decrypt"):
        for sink, label in (("devnull", "`/dev/null`"), ("file", "a file")):
            ref, ours = cmd[f"age-{direction}-{sink}"], cmd[f"warpcrypt-{direction}-{sink}"]
            body.append([f"{direction} (X25519), to {label}", f"{ref['seconds']:.3f}", f"{ours['seconds']:.3f}",
                         gbs(ours["gbps"]), f"{ref['seconds'] / ours['seconds']:.1f}×"])
    return [
        "### age files",
        "",
        f"`warpcrypt age` against the reference `age` on one {size(a['bytes'])} file in the page cache, each tool"
        f" decrypting its own file, wall seconds with process start, {median_note(a)}:"
        f" {source('engine_figures.json')}.",
        "",
        *table(["command", "`age`, s", "`warpcrypt age`, s", "warpcrypt, GB/s", "against `age`"], body),
        "",
    ]


def current_python() -> list[str]:
    d = current("python_overhead.json")
    dev, host = d["device_64_mib_in_place"], d["host_16_byte_call"]
    body = [[f"{size(dev['bytes'])} CUDA tensor in place, {dev['cipher']} (median of {dev['repeats']})",
             f"{dev['python_ms_median']} ms", f"{dev['c_ms_median']} ms", f"{dev['overhead_percent']} %",
             f"≤ {dev['target_percent']:g} %"]]
    for cipher, r in sorted(host["ciphers"].items()):
        body.append([f"{host['input_bytes']}-byte host call, {cipher}", f"{r['python_ns']:g} ns",
                     f"{r['c_ns']:g} ns", f"{r['overhead_ns']:g} ns", f"≤ {host['target_ns']:g} ns"])
    return [
        "### Python's cost over the C API",
        "",
        f"`bench/python_overhead.py`: {source('python_overhead.json')}, warpcrypt {d['warpcrypt']},"
        f" Python {d['python']}.",
        "",
        *table(["figure", "Python", "C API", "overhead", "target"], body),
        "",
    ]


def current_dask() -> list[str]:
    d = current("dask.json")
    counts = sorted({r["cpu_workers"] for r in d["results"]})
    gpu_counts = {r["gpu_workers"] for r in d["results"]} - {0}
    body = []
    for n in counts + ([0] if gpu_counts and 0 not in counts else []):
        cell = lambda r: "" if r is None else (
            f"{gbs(r['median_gb_per_s'])} ({', '.join(gbs(x['gb_per_s']) for x in r['runs'])})")
        cpu = next((r for r in d["results"] if r["cpu_workers"] == n and r["gpu_workers"] == 0), None)
        gpu = next((r for r in d["results"] if r["cpu_workers"] == n and r["gpu_workers"] in gpu_counts), None)
        body.append([str(n), cell(cpu), cell(gpu)])
    return [
        "### Dask",
        "",
        f"`encrypt_files` sealing {d['files']} files of {size(d['file_size'])} ({size(d['total_bytes'])}) with"
        f" {d['cipher']} on one machine, library threads per CPU worker: {d['threads_per_worker']}; the median of"
        f" {d['repeat']} runs (the runs in parentheses): {source('dask.json')}.",
        "",
        *table(["CPU workers", "CPU only, GB/s (runs)", "with a GPU worker, GB/s (runs)"], body),
        "",
    ]


MAPPED_LOAD = "load to cpu: safetensors"


def current_safetensors() -> list[str]:
    d = current("safetensors.json")
    body = [[f"{r['gib']:g} GiB", r["operation"], f"{r['seconds']:.3f}", gbs(r["gb_per_s"])] for r in d["rows"]]
    mapped = any(r["operation"] == MAPPED_LOAD for r in d["rows"])
    return [
        "### Encrypted safetensors",
        "",
        f"`bench/safetensors_bench.py`, files in /dev/shm, the best of each operation's runs:"
        f" {source('safetensors.json')}.",
        "",
        *table(["size", "operation", "seconds", "GB/s"], body),
        "",
        *([f"`{MAPPED_LOAD}`: `safetensors.torch.load_file(device=\"cpu\")` maps the file and reads nothing until a"
           " tensor is used, so that row times the mapping, not a read.", ""] if mapped else []),
    ]


def current_run(notes: LabNotes) -> list[str]:
    lines = current_intro() + current_kernels() + current_backends() + current_cli() + current_sealed()
    lines += current_age() + current_python() + current_dask() + current_safetensors()
    sweep_link = notes.link("Chunk size and stream count")
    return [line.replace("{sweep_link}", sweep_link) for line in lines]


def take(folders: list[Path]) -> None:
    """Makes the files of `gpu-check.sh figures` and `figures-python`, run at
    one commit, the current run: each file from the folder that has it, the
    engine's parts from every folder that measured some."""
    found: dict[str, dict] = {}
    for folder in folders:
        for name in CURRENT_FILES:
            if not (folder / name).is_file():
                continue
            data = json.loads((folder / name).read_text(encoding="utf-8"))
            if name in found and name != "engine_figures.json":
                raise SystemExit(f"{name} is in more than one of the folders")
            found[name] = {**found.get(name, {}), **data}
    missing = [name for name in CURRENT_FILES if name not in found]
    if missing:
        raise SystemExit(f"no {', '.join(missing)} in {', '.join(map(str, folders))}"
                         " (written by scripts/gpu-check.sh figures and figures-python)")
    commits = {data["run"]["commit"] for data in found.values()}
    if len(commits) != 1:
        raise SystemExit(f"the files come from different commits ({', '.join(sorted(commits))})")
    CURRENT.mkdir(parents=True, exist_ok=True)
    for name, data in found.items():
        (CURRENT / name).write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")


def hybrid(notes: LabNotes) -> list[str]:
    runs = {name: load(name) for name in ("hybrid_h200_before.json", "hybrid_h200_after.json")}
    before, after = runs.values()
    # The NVML count's figures came in two runs of one day: the enc paths,
    # then seal, open and age; each path's backends ran in turns in one run.
    latest = [load(name) for name in ("hybrid_h200_nvml_enc.json", "hybrid_h200_nvml_sealed.json")]
    # The AEAD paths again once GPU lanes read into page-locked windows.
    direct_run = load("hybrid_h200_direct.json")
    (device,) = {d["device"] for d in (*runs.values(), *latest, direct_run)}
    (date,) = {d["date"] for d in (*runs.values(), *latest, direct_run)}

    def medians(*runs: dict) -> dict[tuple[str, str], float]:
        return {(r["path"], r["backend"]): r["median_s"] for run in runs for r in run["rows"]}

    old, mid, new, direct = medians(before), medians(after), medians(*latest), medians(direct_run)
    paths = list(dict.fromkeys(r["path"] for r in after["rows"]))
    body = []
    for path in paths:
        now = next(run for run in (direct, new, mid) if (path, "hybrid") in run)
        fastest = min(now[(path, "cpu")], now[(path, "gpu")])
        body.append([path, *(f"{now[(path, b)]:.3f}" for b in ("cpu", "gpu")),
                     f"{old[(path, 'hybrid')]:.3f}" if (path, "hybrid") in old else "—",
                     f"{mid[(path, 'hybrid')]:.3f}",
                     f"{new[(path, 'hybrid')]:.3f}" if (path, "hybrid") in new else "not rerun",
                     f"{direct[(path, 'hybrid')]:.3f}" if (path, "hybrid") in direct else "not rerun",
                     f"{now[(path, 'hybrid')] / fastest:.2f}"])
    commits = " and ".join(f"`docs/bench/{name}` (commit {run['commit']}, {run['rounds']} rounds)" for name, run in
                           zip(("hybrid_h200_nvml_enc.json", "hybrid_h200_nvml_sealed.json"), latest))
    return [
        "## Hybrid against its own members, on host data",
        "",
        f"Each path on a {size(after['bytes'])} random file in /dev/shm (the page cache), cpu, gpu and hybrid"
        f" in turns, median wall seconds, process start included: `docs/bench/hybrid_h200_before.json`"
        f" (commit {before['commit']}), `docs/bench/hybrid_h200_after.json` (commit {after['commit']},"
        f" late lanes for sealed and age files), with the devices counted through NVML, {commits}, and with"
        f" the GPU lanes' windows page-locked, `docs/bench/hybrid_h200_direct.json` (commit"
        f" {direct_run['commit']}, {direct_run['rounds']} rounds, the AEAD paths to /dev/null);"
        f" {device}, {date}. The cpu and gpu columns, and the last column, hybrid over the faster of the two,"
        " are from the latest run that has the path (the enc chacha20 file and pipe paths were not rerun).",
        "",
        *table(["path", "cpu, s", "gpu, s", f"hybrid, s, at {before['commit']}", f"hybrid, s, at {after['commit']}",
                "hybrid, s, NVML count", f"hybrid, s, at {direct_run['commit']}", "hybrid / fastest"], body),
        "",
        "Reproduce: `bench/hybrid_bounds.sh` (`scripts/gpu-check.sh hybrid`, which writes `hybrid.json`;"
        " `HYBRID_PATHS` picks paths).",
        "",
    ]


def hybrid_now(notes: LabNotes) -> list[str]:
    name = "hybrid_h200_16cores_0dc5047.json"
    d = load(name)
    medians = {(r["path"], r["backend"]): r["median_s"] for r in d["rows"]}
    paths = list(dict.fromkeys(r["path"] for r in d["rows"]))
    body = [[path, *(f"{medians[(path, b)]:.3f}" for b in ("cpu", "gpu", "hybrid")),
             f"{medians[(path, 'hybrid')] / min(medians[(path, 'cpu')], medians[(path, 'gpu')]):.2f}"]
            for path in paths]
    rates: dict[tuple[str, str], dict[str, list[float]]] = {}
    for r in d["buffers"]:
        rates.setdefault((r["cipher"], r["memory"]), {}).setdefault(r["backend"], []).append(r["gb_per_s"])
    buffers = [[cipher, memory, *(gbs_span(by[b]) if b in by else "—" for b in ("cpu", "gpu", "hybrid"))]
               for (cipher, memory), by in rates.items()]
    return [
        "Every path again at one commit, on the single-GPU machine: " + d["what"] + f"; {d['rounds']} rounds,"
        f" {size(d['bytes'])}, median wall seconds: `docs/bench/{name}`, {d['device']}, {d['date']}, commit"
        f" {d['commit']}. The last column is hybrid over the faster of cpu and gpu; the lab notes, "
        + notes.link("Hybrid against cpu and gpu on every path") + ", say what a median of this many rounds"
        " holds.",
        "",
        *table(["path", "cpu, s", "gpu, s", "hybrid, s", "hybrid / fastest"], body),
        "",
        "The buffers in the same runs (the range over the runs, GB/s):",
        "",
        *table(["cipher", "host memory", "cpu, GB/s", "gpu, GB/s", "hybrid, GB/s"], buffers),
        "",
        *hybrid_residual(notes),
    ]


def hybrid_residual(notes: LabNotes) -> list[str]:
    name = "hybrid_residual_h200_0dc5047.json"
    d = load(name)
    run = next(r for r in d["runs"] if r["name"] == "B")
    variants = list(run["variants"])
    body = []
    for entry in run["paths"]:
        cpu = entry["seconds"]["cpu"]["median"]
        body.append([entry["path"], f"{1e3 * cpu:.1f}",
                     *(f"{entry['seconds'][v]['median'] / cpu:.2f}" for v in variants if v != "cpu")])
    return [
        "Where hybrid's extra time goes: " + d["what"] + f". Run B, {run['paths'][0]['seconds']['cpu']['rounds']}"
        " rounds, each variant's median wall time over cpu's:"
        f" `docs/bench/{name}`, {d['device']}, {d['date']}, commit {d['commit']}. The variants:",
        "",
        *(f"- {v}: {run['variants'][v]}" for v in variants),
        "",
        *table(["path", "cpu, ms", *(v for v in variants if v != "cpu")], body),
        "",
        "What the phases show is in the lab notes, " + notes.link("Where a hybrid job's time goes") + ".",
        "",
    ]


def hybrid_device_list(notes: LabNotes) -> list[str]:
    name = "hybrid_device_list_h200_a2c64e6.json"
    d = load(name)
    turns, residual = (next(r for r in d["runs"] if r["name"] == n) for n in ("C", "D"))

    def ms(entry: dict, variant: str) -> float:
        return 1e3 * entry["seconds"][variant]["median"]

    body_turns = [[e["path"], f"{ms(e, 'before, cpu'):.1f}", f"{ms(e, 'before, hybrid'):.1f}",
                   f"{ms(e, 'before, hybrid') / ms(e, 'before, cpu'):.3f}", f"{ms(e, 'after, cpu'):.1f}",
                   f"{ms(e, 'after, hybrid'):.1f}", f"{ms(e, 'after, hybrid') / ms(e, 'after, cpu'):.3f}"]
                  for e in turns["paths"]]
    others = [v for v in residual["variants"] if v != "cpu"]
    body_residual = [[e["path"], f"{ms(e, 'cpu'):.1f}", *(f"{ms(e, v):.1f} ({ms(e, v) / ms(e, 'cpu'):.3f})" for v in others)]
                     for e in residual["paths"]]
    return [
        "## A hybrid job's devices from the driver's list, before and after",
        "",
        f"Hybrid against cpu: {d['what']}. `docs/bench/{name}`, {d['device']}, {d['date']}, commits"
        f" {d['before_commit']} (before: NVML counts the devices beside the work) and {d['commit']} (after: the"
        " kernel driver's list counts them at the job's entry). Median milliseconds, and hybrid's over cpu's.",
        "",
        *table(["path", "before, cpu", "before, hybrid", "before, hybrid ÷ cpu", "after, cpu", "after, hybrid",
                "after, hybrid ÷ cpu"], body_turns),
        "",
        "What is left, run D: median milliseconds and the ratio to cpu. The variants:",
        "",
        *(f"- {v}: {residual['variants'][v]}" for v in residual["variants"]),
        "",
        *table(["path", "cpu", *others], body_residual),
        "",
        "What it shows is in the lab notes, " + notes.link("A hybrid job's devices from the driver's list") + ".",
        "",
    ]


def hybrid_driver_version(notes: LabNotes) -> list[str]:
    name = "hybrid_driver_version_h200_e3ae375.json"
    d = load(name)
    run = d["run"]
    body = []
    for part in d["runs"]:
        for path in dict.fromkeys(r["path"] for r in part["rows"]):
            by = {r["backend"]: r for r in part["rows"] if r["path"] == path}
            faster = min(by["cpu"]["median_s"], by["gpu"]["median_s"])
            body.append([path, size(part["bytes"]), str(part["rounds"]),
                         *(f"{by[b]['median_s']:.3f} ({by[b]['best_s']:.3f})" for b in ("cpu", "gpu", "hybrid")),
                         f"{by['hybrid']['median_s'] / faster:.3f}"])
    loads = ", ".join(f"{backend} {n}" for backend, n in d["libcuda_loads"]["by_backend"].items())
    return [
        "## Hybrid once the device count reads the driver's version file",
        "",
        f"`{d['command']}`, the backends in turns: `docs/bench/{name}`, {machine(run)}, {run['date']}, commit"
        f" {run['commit']}; rebuilt from {d['from_log']} ({d['rebuilt_because']}). Median wall seconds with"
        " process start (the best in parentheses), and hybrid over the faster of cpu and gpu. How often"
        f" `{d['libcuda_loads']['command']}` loaded libcuda, by backend: {loads}.",
        "",
        *table(["path", "size", "rounds", "cpu, s", "gpu, s", "hybrid, s", "hybrid ÷ faster"], body),
        "",
        "What changed is in the lab notes, " + notes.link("The device count without loading libcuda") + ".",
        "",
    ]


def gpu_host_data(notes: LabNotes) -> list[str]:
    names = ("gpu_host_data_h200_457a505.json", "gpu_host_data_h200_ecd6702.json")
    runs = [load(name) for name in names]
    (device,) = {d["device"] for d in runs}
    (date,) = {d["date"] for d in runs}
    body = []
    for run in runs:
        for r in run["rows"]:
            points = sorted((p["bytes"], p["median_s"]) for p in r["points"])
            body.append([run["commit"], r["path"], *(f"{size(b)}: {t:.3f}" for b, t in points), gbs(r["rate_gbps"]),
                         f"{r['start_s']:.2f}", gbs(r["pinned_gbps"]), f"{r['rate_gbps'] / r['pinned_gbps']:.2f}"])
    head = ["commit", "path", "small file, s", "large file, s", "rate, GB/s", "start, s", "pinned, GB/s",
            "rate / pinned"]
    return [
        "## The gpu backend on host data",
        "",
        "The gpu backend on two sizes of file in /dev/shm (the page cache), to /dev/null: the median wall"
        " seconds of each (process start included), and from both sizes the rate once started"
        " and the start, against the same cipher's figure from pinned buffers (`warpcrypt speed --memory"
        " pinned`, one GiB calls) in the same run: " + ", ".join(
            f"`docs/bench/{name}` (commit {run['commit']}, {run['rounds']} rounds)" for name, run in zip(names, runs))
        + f"; {device}, {date}. What bounds these is in the lab notes, "
        + notes.link("The GPU on host data") + ".",
        "",
        *table(head, body),
        "",
        "Reproduce: `bench/gpu_host_data.sh` (`scripts/gpu-check.sh host-data`, which writes `host-data.json`).",
        "",
    ]


def aead_staging(notes: LabNotes) -> list[str]:
    name = "aead_staging_h200_97408f3.json"
    d = load(name)
    body = [[r["cipher"], r["memory"], r["direction"], size(r["bytes"]), gbs_span(r["before_gbps"]),
             gbs_span(r["after_gbps"])]
            for r in d["rows"]]
    return [
        "## AEAD on host memory through the GPU",
        "",
        "`warpcrypt speed --backend gpu` on host memory, sealing and opening one message per call, before the"
        " engine staged pageable memory for the GPU AEAD (commit " + d["before_commit"] + ", the backend's own"
        " staging) and after (commit " + d["commit"] + f"), in turns, {d['rounds']} rounds, the range of the rounds'"
        f" medians: `docs/bench/{name}`, {d['device']}, {d['date']}. How the staging lanes were chosen is in the"
        " lab notes, " + notes.link("The GPU AEAD's staging") + ".",
        "",
        *table(["AEAD", "host memory", "call", "size", "before, GB/s", "after, GB/s"], body),
        "",
        "Reproduce: `warpcrypt speed -evp CIPHER --backend gpu --memory pageable|pinned [-decrypt] -bytes SIZE`.",
        "",
        *aead_staging_files(),
    ]


def aead_staging_files() -> list[str]:
    name = "aead_staging_files_h200_512c000.json"
    d = load(name)
    median = lambda values: f"{statistics.median(values):.3f}"
    body = [[r["path"].replace("-", " -"), r["backend"], median(r["before_s"]), median(r["after_s"]),
             f"{statistics.median(r['after_s']) / statistics.median(r['before_s']):.2f}"] for r in d["rows"]]
    return [
        "The sealed and age files, whose GPU lanes' windows are page-locked and go straight to the device AEAD,"
        f" before and after the same change: {d['command']}; {d['rounds']} rounds, median wall seconds:"
        f" `docs/bench/{name}`, {d['device']}, {d['date']}, commits {d['before_commit']} and {d['commit']}.",
        "",
        *table(["path", "backend", "before, s", "after, s", "after ÷ before"], body),
        "",
    ]


def cli_before_after(notes: LabNotes) -> list[str]:
    name = "cli_before_after_dev.json"
    d = load(name)
    median = lambda values: statistics.median(values)
    body = [[r["path"], r["reference"], f"{median(r['reference_s']):.3f}", f"{median(r['before_s']):.3f}",
             f"{median(r['after_s']):.3f}", f"{median(r['after_s']) / median(r['before_s']):.2f}",
             f"{median(r['reference_s']) / median(r['after_s']):.1f}×"] for r in d["rows"]]
    return [
        "## The CLI against openssl and age, before and after the one-engine work",
        "",
        f"{d['command']}; {d['rounds']} rounds, median wall seconds: `docs/bench/{name}`, {d['device']},"
        f" {d['date']}, commits {d['before_commit']} (before the one-engine work) and {d['commit']}; see the lab"
        " notes' " + notes.link("The CLI against openssl and age") + ".",
        "",
        *table(["path", "reference tool", "reference, s", "warpcrypt before, s", "warpcrypt after, s",
                "after ÷ before", "speed-up over the reference"], body),
        "",
    ]


def before_after(name: str, heading: str) -> list[str]:
    d = load(name)
    median = statistics.median
    body = [[r["workload"], gbs(median(r["before"])), gbs_span(r["before"]), gbs(median(r["after"])),
             gbs_span(r["after"]), f"{median(r['after']) / median(r['before']):.3f}"] for r in d["rows"]]
    return [
        f"## {heading}",
        "",
        f"{d['command']}: `docs/bench/{name}`, {d['device']}, {d['date']}, commits {d['before_commit']}"
        f" (before) and {d['commit']} (after). Figures in GB/s.",
        "",
        *table(["workload", "before, median", "before, spread", "after, median", "after, spread",
                "after ÷ before"], body),
        "",
    ]


TWO_GPUS_RUN = "multigpu_h200x2_9b636fe.json"
TWO_GPUS_AEAD = "aead_pieces_devices_h200x2_04fa732.json"
TWO_GPUS_SLOTS = "file_load_h200x2_6b34a6c.json"
TWO_GPUS_REVERTED = "safetensors_reader_copies_reverted_h200x2_d250c5f.json"
TWO_GPUS_NATIVE = "safetensors_native_reads_h200x2_cc07958.json"


def ratio(one: float, every: float) -> str:
    return f"{every / one:.2f}×"


def two_gpus(notes: LabNotes) -> list[str]:
    """One device call on a machine with two GPUs: device 0 alone against
    both, then what bounds the weights, and the two changes tried."""
    d = load(TWO_GPUS_RUN)
    run = d["run"]
    body = []
    for resident, where in (("device", "in device memory, each device its own"),
                            ("host", "calls from pinned host memory")):
        for cipher in dict.fromkeys(s["cipher"] for s in d["speed"]):
            one, every = (next(s for s in d["speed"] if s["cipher"] == cipher and s["resident"] == resident
                               and (" x " in s["devices"]) == several) for several in (False, True))
            body.append([f"{cipher}, {size(one['bytes'])} {where} (`speed`, median)", gbs(one["median_gbps"]),
                         gbs(every["median_gbps"]), ratio(one["median_gbps"], every["median_gbps"])])
    one, every = (next(c["median_gbps"] for c in d["copies"] if c["devices"] == n) for n in (1, 2))
    body.append(["pinned host → GPU → host copies alone, no cipher (`warpcrypt_kernel_bench copies`, median)",
                 gbs(one), gbs(every), ratio(one, every)])
    for size_gib in sorted({r["gib"] for r in d["weights"] if not r["operation"].startswith("get_slice")}):
        rows = {r["operation"]: r["gb_per_s"] for r in d["weights"] if r["gib"] == size_gib}
        one, every = rows["load to cuda:0: warpcrypt"], rows["load to cuda:0 and cuda:1: warpcrypt"]
        body.append([f"encrypted safetensors, {gib(size_gib)} in /dev/shm, `load_file` to cuda:0, and with a"
                     " device_map half to each (the best of the bench's repeats)", gbs(one), gbs(every),
                     ratio(one, every)])
    seals = d["seal_to_dev_null"]
    # The gpu workers on one device, then on a list of them.
    one, every = (statistics.median(r["wall_seconds"]) for r in
                  sorted((r for r in seals if r["workers"].startswith("gpu ")), key=lambda r: "," in r["workers"]))
    body.append([f"`seal -keyfile` of a {size(d['seal_file_bytes'])} page-cached file to /dev/null, --backend gpu"
                 f" (median wall s of {len(seals[0]['wall_seconds'])})",
                 f"{one:.2f} s", f"{every:.2f} s", ratio(every, one)])
    bounds = d["load_bounds"]["rows"]
    slots = load(TWO_GPUS_SLOTS)
    slot_rows = []
    readers = min(r["readers_per_device"] for r in slots["rows"])
    for slot in sorted({r["slot_bytes"] for r in slots["rows"]}):
        one, every = (next(r["best_gbps"] for r in slots["rows"] if r["slot_bytes"] == slot and r["devices"] == n
                           and r["readers_per_device"] == readers) for n in (1, 2))
        slot_rows.append([size(slot), gbs(one), gbs(every), ratio(one, every)])
    aead = load(TWO_GPUS_AEAD)
    aead_rows = []
    for s in aead["after"]["speed"]:
        was = [b["median_gbps"] for b in aead["before"]["speed"]
               if (b["cipher"], b["direction"], b["devices"]) == (s["cipher"], s["direction"], s["devices"])]
        aead_rows.append([f"{s['cipher']} {s['direction']}", re.sub(r"(\d+) x ", r"\1 × ", s["devices"]),
                          gbs(was[0]) if was else "—", gbs(s["median_gbps"])])
    tried = load(TWO_GPUS_REVERTED)
    reverted = {(r["gib"], r["operation"]): r["gb_per_s"] for r in tried["rows"]}
    kept = {(r["gib"], r["operation"]): r["gb_per_s"] for r in d["weights"]}
    reverted_rows = [[gib(g), op.split(": ")[0], gbs(kept[(g, op)]), gbs(reverted[(g, op)])]
                     for (g, op) in kept if op.startswith("load to") and (g, op) in reverted]
    native = load(TWO_GPUS_NATIVE)
    native_rows = [[gib(r["gib"]), r["operation"], gbs(kept[(r["gib"], r["operation"])])
                    if (r["gib"], r["operation"]) in kept else "—", gbs(r["gb_per_s"])]
                   for r in native["rows"] if r["operation"].startswith("load to")]
    return [
        "## Two GPUs in one host",
        "",
        f"One device call, `scripts/gpu-check.sh multigpu multigpu-weights multigpu-load`: `docs/bench/{TWO_GPUS_RUN}`,"
        f" {machine(run)}, {run['date']}, commit {run['commit']}. The multi-device tests passed in the same call"
        " (the library's, the CLI's and the Python package's, and memcheck on the library's).",
        "",
        *table(["workload", "cuda:0", "cuda:0 and cuda:1", "ratio"], body),
        "",
        f"What bounds the weights: the loader's parts alone on a {gib(d['load_bounds']['gib'])} file in /dev/shm, in"
        " the same call (`bench/multigpu_load_bounds.py`; the best of its runs, GB/s):",
        "",
        *table(["part", "GB/s"], [[name, gbs(v)] for name, v in bounds.items()]),
        "",
        "The same pipeline in C++, no cipher and no Python, each reader copying the slot it filled"
        f" (`bench/gpu/file_load_bench.cu`; `docs/bench/{TWO_GPUS_SLOTS}`, commit {slots['run']['commit']}, the same"
        f" kind of machine, a later call): by slot size, {readers} readers a device, the best of its loads of"
        f" {size(slots['rows'][0]['file_bytes'])}, GB/s.",
        "",
        *table(["slot", "cuda:0", "cuda:0 and cuda:1", "ratio"], slot_rows),
        "",
        "A long AEAD message from pinned memory, before and after its pieces ran on the devices of the lanes that"
        f" take them (`docs/bench/{TWO_GPUS_AEAD}`, commits {aead['before']['run']['commit']} and"
        f" {aead['after']['run']['commit']}, each on a freshly lent machine of the same kind; `speed`, median GB/s;"
        " — where the run before did not measure it):",
        "",
        *table(["cipher", "devices", "before", "after"], aead_rows),
        "",
        "The loader's readers each queueing their own slot's copy, through smaller slots, tried and reverted"
        f" (`docs/bench/{TWO_GPUS_REVERTED}`, commit {tried['run']['commit']}, against the run above; GB/s):",
        "",
        *table(["size", "load", "kept loader", "readers queueing copies"], reverted_rows),
        "",
        "The loads read by the library instead (`wc_read_files_to_device`, the engine's readers and page-locked"
        f" slots), a batch of tensors a call: `docs/bench/{TWO_GPUS_NATIVE}`, commit {native['run']['commit']},"
        " rebuilt from the lines the bench printed, on another host of the same kind as the run above's, so the"
        " columns are not a measurement in turns (GB/s; the best of the bench's repeats):",
        "",
        *table(["size", "load", "Python's readers (the run above)", "the library's readers"], native_rows),
        "",
        "Why, and what would lift each bound: the lab notes' " + notes.link("Two GPUs in one host again") + ".",
        "",
        "Reproduce: `scripts/gpu-check.sh multigpu multigpu-weights multigpu-load` on a machine with two GPUs.",
        "",
    ]


def python(notes: LabNotes) -> list[str]:
    return ["## Python against pyca/cryptography", "", *python_aead(notes)]


def pyca_table(d: dict) -> list[str]:
    """A Python AEAD run's rows: µs per call, warpcrypt against pyca/cryptography."""
    return table(["AEAD", "call", "size", "warpcrypt, µs", "pyca, µs", "warpcrypt ÷ pyca"],
                 [[r["aead"], r["direction"], r["label"], f"{r['warpcrypt_us']:.2f}", f"{r['pyca_us']:.2f}",
                   f"{r['warpcrypt_us'] / r['pyca_us']:.2f}"] for r in d["rows"]])


def python_aead(notes: LabNotes) -> list[str]:
    name = "python_aead_h200_16cores.json"
    d = load(name)
    return [
        "Per call, against pyca/cryptography " + d["cryptography"] + " in the same process, in turns:"
        f" `docs/bench/{name}`, {d['device']}, {d['date']}, commit {d['commit']}, Python {d['python']};"
        " the median of three rounds, each the median of the timeit repeats. Below one, warpcrypt is faster.",
        "",
        *pyca_table(d),
        "",
        f"Reproduce: `bench/python_aead_bench.py --repeats {d['repeats']} --json PATH` under `taskset`, on"
        f" {d['cpus_used']} cores."
        " The development machine's runs are in the lab notes' " + notes.link("Python AEAD per call") + " and "
        + notes.link("AES-GCM on VAES") + ".",
        "",
        *python_aead_segmented(notes),
        *python_aead_dev(notes),
    ]


def python_aead_segmented(notes: LabNotes) -> list[str]:
    timed = load("python_aead_h200_16cores_dc9408e.json")
    name = "python_aead_h200_16cores_97408f3.json"
    d = load(name)
    return [
        "Once one long message of either AEAD runs in segments over the cores, against pyca/cryptography "
        + d["cryptography"] + f", the benchmark script on all {d['cpus_used']} cores: `docs/bench/{name}`,"
        f" {d['device']}, {d['date']}, commit {d['commit']}, Python {d['python']}. The first figures of that"
        " change (`docs/bench/python_aead_h200_16cores_dc9408e.json`, commit " + timed["commit"] + ") were taken"
        " another way: " + timed["method"] + "; see the lab notes' " + notes.link("One ChaCha") + " and "
        + notes.link("Python against pyca on") + ".",
        "",
        *pyca_table(d),
        "",
    ]


def python_aead_dev(notes: LabNotes) -> list[str]:
    name = "python_aead_dev.json"
    d = load(name)
    body = [[r["aead"], r["direction"], r["label"],
             f"{r['before_warpcrypt_us'] / r['before_pyca_us']:.2f}",
             f"{r['warpcrypt_us']:.2f}", f"{r['pyca_us']:.2f}", f"{r['warpcrypt_us'] / r['pyca_us']:.2f}"]
            for r in d["rows"]]
    return [
        "The small sizes' target is the development machine's. The benchmark script there, on the " + d["device"] + ","
        f" `docs/bench/{name}`, {d['date']}, commit {d['commit']}, Python {d['python']}, against"
        f" pyca/cryptography {d['cryptography']}; warpcrypt links {d['openssl_linked']}. The before column is "
        + d["before"] + f", commit {d['before_commit']}; the lab notes, "
        + notes.link("Small messages against pyca") + ", say what changed.",
        "",
        *table(["AEAD", "call", "size", "before: warpcrypt ÷ pyca", "warpcrypt, µs", "pyca, µs", "warpcrypt ÷ pyca"],
               body),
        "",
        *aead_overlap_check(notes),
    ]


def aead_overlap_check(notes: LabNotes) -> list[str]:
    name = "aead_overlap_check_dev.json"
    d = load(name)
    body = [[r["aead"], r["call"], size(r["bytes"]), gbs_span(r["before_gbps"]), gbs_span(r["after_gbps"]),
             gbs_span(r["openssl_gbps"])] for r in d["rows"]]
    return [
        "The same change at the C API, one-shot messages on one thread: " + d["command"] + f"; `docs/bench/{name}`,"
        f" {d['device']}, {d['date']}, commits {d['before_commit']} and {d['commit']}; the range of the rounds.",
        "",
        *table(["AEAD", "call", "size", "before, GB/s", "after, GB/s", f"{d['openssl']} EVP, GB/s"], body),
        "",
    ]

SAFETENSORS_OPS = [
    ("load to cuda:0: warpcrypt", "load to cuda:0, warpcrypt (encrypted)"),
    ("load to cuda:0: warpcrypt, no decryption (plain file)", "load to cuda:0, warpcrypt, plain file"),
    ("load to cuda:0: safetensors", "load to cuda:0, `safetensors.torch.load_file` (plain)"),
    ("load to cuda:0: cryptotensors", "load to cuda:0, `cryptotensors.torch.load_file`"),
    ("save: warpcrypt from GPU tensors", "save from CUDA tensors, warpcrypt"),
    ("save: safetensors from GPU tensors", "save from CUDA tensors, `safetensors.torch.save_file`"),
]


def safetensors(notes: LabNotes) -> list[str]:
    section = "Encrypted safetensors"
    files = ["safetensors_h200_run4.json", "safetensors_h200.json"]
    runs = [load(f)["rows"] for f in files]
    run_a, run_b = (notes.grab(section, r"commits (\w+) \(run A\) and (\w+) \(run B\)"),
                    notes.grab(section, r"commits \w+ \(run A\) and (\w+) \(run B\)"))
    for f in files:
        if f"`docs/bench/{f}`" not in notes.find(section)[2] and f"`{f}`" not in notes.find(section)[2]:
            raise SystemExit(f"lab notes: {f} not named under {section!r}")
    sizes = sorted({r["gib"] for rows in runs for r in rows})
    head = ["operation"] + [f"{gib(g)}, `{f}`" for g in sizes for f in files]
    body = []
    for op, label in SAFETENSORS_OPS:
        row = [label]
        for g in sizes:
            for rows in runs:
                hit = [r for r in rows if r["operation"] == op and r["gib"] == g]
                row.append(f"{gbs(hit[0]['gb_per_s'])} GB/s" if hit else "—")
        body.append(row)
    meta = {(r["device"], r["gpus"], r["cores"], r["date"], r["commit"]) for rows in runs for r in rows}
    (device, gpus, cores, date, commit), = meta

    cpu = load("safetensors_dev_cpu.json")["rows"]
    (cdev, ccores, cdate, ccommit, cgib), = {(r["device"], r["cores"], r["date"], r["commit"], r["gib"])
                                             for r in cpu}
    cpu_ops = list(dict.fromkeys(r["operation"] for r in cpu))
    cpu_body = [[op, ", ".join(gbs(r["gb_per_s"]) for r in cpu if r["operation"] == op)] for op in cpu_ops]

    fw = load("file_write_bounds_h200.json")
    ways = list(dict.fromkeys(r["way"] for r in fw["rows"]))
    threads = sorted({r["threads"] for r in fw["rows"]})
    fw_body = []
    for w in ways:
        row = [w]
        for t in threads:
            hit = [r for r in fw["rows"] if r["way"] == w and r["threads"] == t]
            row.append(gbs(hit[0]["gb_per_s"]) if hit else "—")
        fw_body.append(row)
    (fw_bytes,) = {r["bytes"] for r in fw["rows"]}
    fw_run = notes.grab(section, r"\((run \w), [^)]*file_write_bounds_h200\.json")
    fw_commit = notes.grab(section, rf"(?i:{fw_run}) at (?:commit )?(\w+)")

    mg = load("multigpu_load_bounds_h200.json")
    mg_nodes = mg["topology"]["gpu_nodes"]

    newer_date = notes.grab(section, r", (\d{4}-\d\d-\d\d)\)")
    newer_device = notes.grab(section, r"tool's\s+`[^`]*` \(([^,]*),")
    return [
        "## Encrypted safetensors",
        "",
        f"`warpcrypt.safetensors` against `safetensors` and `cryptotensors`, files in /dev/shm, best of the runs. "
        f"`docs/bench/{files[0]}` and `docs/bench/{files[1]}`: {device}, {gpus} GPU, {cores} cores, {date}. "
        f"Both JSON files say commit {commit}, which the lab notes explain is the device's stale git metadata; "
        f"there the runs are A (commit {run_a}) and B (commit {run_b}).",
        "",
        *table(head, body),
        "",
        f"Reproduce: `python3 bench/safetensors_bench.py {' '.join(f'--gib {g:g}' for g in sizes)} --dir /dev/shm"
        " --json F`"
        " (`scripts/gpu-check.sh safetensors-bench`).",
        "",
        f"**Newer runs are not in this table.** Runs C and D ({newer_date}, {newer_device}, each tensor opened"
        " with one strided batch) loaded faster; their JSON did not come back from the device, so their figures"
        " exist only as the table the benchmark printed, in the lab notes' " + notes.link(section) + ".",
        "",
        f"On a CPU without a GPU (`--cpu-only`, NumPy loaders, {gib(cgib)}): `docs/bench/safetensors_dev_cpu.json`,"
        f" {cdev}, {ccores} cores, {cdate}, commit {ccommit}; one figure per run.",
        "",
        *table(["operation", "GB/s"], cpu_body),
        "",
        f"What writing a new {size(fw_bytes)} file in {fw['dir']} costs, each way the writer could do it"
        f" (`docs/bench/file_write_bounds_h200.json`, GB/s by threads). The JSON records no device, date or"
        f" commit; the lab notes' " + notes.link(section) + f" give it as {fw_run}, commit {fw_commit},"
        f" {newer_date}, on {newer_device}.",
        "",
        *table(["way"] + [f"{t} thread{'s' if t != 1 else ''}" for t in threads], fw_body),
        "",
        f"Reproduce: `python3 bench/file_write_bounds.py --gib {fw_bytes >> 30} --dir {fw['dir']} --json F`.",
        "",
        f"What bounds a load to both GPUs at once: the loader's parts alone, on a {gib(mg['gib'])} file in"
        f" /dev/shm (`docs/bench/multigpu_load_bounds_h200.json`, {mg['device']}, {mg['date']}, commit"
        f" {mg['commit']}; both GPUs on NUMA node {', '.join(str(n) for n in sorted(set(mg_nodes)))}, best of"
        " the runs):",
        "",
        *table(["part", "GB/s"], [[name, gbs(value)] for name, value in mg["rows"].items()]),
        "",
        "Reproduce: `python3 bench/multigpu_load_bounds.py --gib F --dir /dev/shm --json F`"
        " (`scripts/gpu-check.sh multigpu-load`).",
        "",
    ]


SHARDED_RUN = "safetensors_h200_dec535d.json"
REGISTER_RUN = "page_cache_register_h200_dec535d.json"
SHARDED_OPS = [
    ("load to cuda:0: warpcrypt", "load to cuda:0, warpcrypt (encrypted, one file)"),
    ("load to cuda:0: warpcrypt, sharded checkpoint", "load to cuda:0, warpcrypt `load_state_dict`, sharded"),
    ("load to cuda:0: warpcrypt, no decryption (plain file)", "load to cuda:0, warpcrypt, plain file"),
    ("load to cuda:0: safetensors", "load to cuda:0, `safetensors.torch.load_file` (plain)"),
    ("load to cuda:0: cryptotensors", "load to cuda:0, `cryptotensors.torch.load_file`"),
    ("load to cpu: warpcrypt", "load to cpu, warpcrypt (encrypted)"),
    ("load to cpu: cryptotensors", "load to cpu, `cryptotensors.torch.load_file`"),
    ("save: warpcrypt from GPU tensors", "save from CUDA tensors, warpcrypt"),
    ("save: safetensors from GPU tensors", "save from CUDA tensors, `safetensors.torch.save_file`"),
    ("save: cryptotensors from host tensors", "save from host tensors, `cryptotensors.torch.save_file`"),
]


def safetensors_now() -> list[str]:
    name = "safetensors_8gib_h200_fb579c4.json"
    d = load(name)
    first = d["rows"][0]
    body = [[f"{r['gib']:g} GiB", r["operation"], f"{r['seconds']:.3f}", f"{r['gb_per_s']:.2f}"] for r in d["rows"]]
    return [
        f"## Encrypted safetensors at the end of the one-core work ({first['gib']:g} GiB)",
        "",
        f"`{d['command']}`: `docs/bench/{name}`, {first['device']}, {first['cores']} cores, {first['date']},"
        f" commit {first['commit']} ({d['commit_note']}).",
        "",
        *table(["size", "operation", "seconds", "GB/s"], body),
        "",
    ]


def safetensors_sharded(notes: LabNotes) -> list[str]:
    """The run that measured sharded checkpoints, slices and registering
    the page cache with CUDA."""
    run = load(SHARDED_RUN)
    rows = run["rows"]
    (device, gpus, cores, date, commit), = {(r["device"], r["gpus"], r["cores"], r["date"], r["commit"]) for r in rows}
    sizes = sorted({r["gib"] for r in rows if not r["operation"].startswith("get_slice")})
    body = []
    for op, label in SHARDED_OPS:
        # The sharded row's name ends with its shard size, in parentheses.
        named = [r["operation"] for r in rows if r["operation"] == op or r["operation"].startswith(op + " (")]
        row = [label + (" " + named[0][len(op) + 1:] if named and named[0] != op else "")]
        for g in sizes:
            hit = [r for r in rows if r["operation"] in named[:1] and r["gib"] == g]
            row.append(f"{hit[0]['seconds']:.3f} s, {gbs(hit[0]['gb_per_s'])} GB/s" if hit else "—")
        body.append(row)
    slices = [r for r in rows if r["operation"].startswith("get_slice")]
    reg = load(REGISTER_RUN)
    reads = [r["GBps"] for r in reg["rows"] if r["way"] == "read into pinned slots"]
    registered = [r for r in reg["rows"] if r["way"] == "register the mapping"]
    return [
        "### Sharded checkpoints, slices, and the page cache registered",
        "",
        f"`docs/bench/{SHARDED_RUN}`: {device}, {gpus} GPU, {cores} cores, {date}, commit {commit}; {run['source']}."
        f" {run['method'].capitalize()}.",
        "",
        *table(["operation"] + [gib(g) for g in sizes], body),
        "",
        f"`get_slice` of a quarter of a {gib(slices[0]['gib'])} tensor ({run['slice']}), with"
        " the share of the tensor's bytes the process read for it (`rchar` of /proc/self/io): "
        + "; ".join(f"{r['operation'].split(': ')[0].replace('get_slice of a quarter to ', 'to ')}"
                    f" {r['seconds']:.3f} s, {r['operation'].split('(')[1].rstrip(')')}" for r in slices) + ".",
        "",
        f"Registering the page cache's pages with CUDA instead of reading them (`docs/bench/{REGISTER_RUN}`,"
        f" {reg['device']}, {reg['date']}, commit {reg['commit']}, {gib(reg['gib'])} in /dev/shm): registering"
        f" took {min(r['register_s'] for r in registered):.2f}–{max(r['register_s'] for r in registered):.2f} s,"
        f" the copies from the registered mapping then ran at {gbs(min(r['copy_GBps'] for r in registered))} GB/s,"
        f" {gbs(min(r['GBps'] for r in registered))}–{gbs(max(r['GBps'] for r in registered))} GB/s in all,"
        f" against {gbs(min(reads))}–{gbs(max(reads))} GB/s for the loader's readers into pinned slots."
        " Pinning the pages costs more than copying them.",
        "",
        "Reproduce: `scripts/gpu-check.sh safetensors-bench` (bench/safetensors_bench.py and"
        " bench/page_cache_register_bench.py).",
        "",
    ]


# -- the page and the README's table ---------------------------------------

def page(notes: LabNotes) -> str:
    lines = [
        "# Performance",
        "",
        "Figures written by `scripts/performance-page.py` from the benchmarks' results in `docs/bench/`;",
        "do not edit this page by hand. The first section is the current run; each later table names its",
        "results file and the device, date and commit that file records, or, where the file records none,",
        "where they come from.",
        "GB/s means 10^9 bytes of plaintext per second. How each run was made, earlier runs, and what",
        f"the figures mean are in the lab notes, [{NOTES_LINK}]({NOTES_LINK}).",
        "",
    ]
    for area in (current_run, gpu_kernels, hybrid, hybrid_now, hybrid_device_list, hybrid_driver_version,
                 gpu_host_data, aead_staging,
                 cli_before_after, python, safetensors, safetensors_sharded):
        lines += area(notes)
    lines += safetensors_now()
    lines += before_after("core_before_after_h200_3eaaca0.json",
                          "The one pool of page-locked memory and the GPU AEAD split by role, before and after")
    lines += before_after("transfer_lane_h200_a4516a1.json",
                          "The GPU AEAD's pageable host memory on the engine's transfer lanes, before and after")
    lines += before_after("transfer_lane_pinned_reverted_h200_46e712c.json",
                          "Page-locked host memory on the transfer lanes: slower, reverted")
    lines += before_after("transfer_lane_pinned_h200_a1fdea9.json",
                          "Page-locked host memory on the transfer lanes again, the last piece one segment long")
    lines += before_after("gpu_lanes_transfer_h200_d3169b1.json",
                          "The plain ciphers' GPU lanes on the engine's transfer lanes, before and after")
    lines += before_after("cli_page_aligned_staging_dev_496a44f.json",
                          "A CPU lane's staging on a page boundary: enc on page-cached files, before and after")
    lines += two_gpus(notes)
    return "\n".join(lines).rstrip("\n") + "\n"


def readme_table() -> str:
    e = current("engine_figures.json")
    cli, sealed, backends = e["cli"]["commands"], e["sealed"]["commands"], e["backends"]["aes-256-ctr"]["gbps"]
    st = current("safetensors.json")["rows"]
    big = max(r["gib"] for r in st)
    op = {r["operation"]: r for r in st if r["gib"] == big}
    d = current("dask.json")
    best_dask = max(d["results"], key=lambda r: r["median_gb_per_s"])
    run = e["run"]
    rows = [
        [f"`warpcrypt enc -{e['cli']['cipher']}`, a {size(e['cli']['bytes'])} page-cached file to `/dev/null`",
         f"{gbs(cli['warpcrypt-auto-devnull']['gbps'])} GB/s (`openssl enc`: {gbs(cli['openssl-devnull']['gbps'])})"],
        [f"`warpcrypt seal -aes-256-gcm`, a {size(e['sealed']['bytes'])} page-cached file to `/dev/null`",
         f"{gbs(sealed['seal-aes-256-gcm-devnull']['gbps'])} GB/s"],
        [f"`warpcrypt age -r`, a {size(e['age']['bytes'])} page-cached file to `/dev/null`",
         f"{gbs(e['age']['commands']['warpcrypt-encrypt-devnull']['gbps'])} GB/s"
         f" (`age`: {gbs(e['age']['commands']['age-encrypt-devnull']['gbps'])})"],
        [f"aes-256-ctr, {size(e['backends']['aes-256-ctr']['bytes'])} calls in pinned host memory, hybrid backend",
         f"{gbs(backends['hybrid-pinned'])} GB/s (cpu: {gbs(backends['cpu-pinned'])})"],
        [f"encrypted safetensors, {gib(big)} loaded to cuda:0",
         f"{gbs(op['load to cuda:0: warpcrypt']['gb_per_s'])} GB/s "
         f"(plain `safetensors`: {gbs(op['load to cuda:0: safetensors']['gb_per_s'])})"],
        [f"Dask `encrypt_files`, {size(d['total_bytes'])} sealed on one machine ({best_dask['config']})",
         f"{gbs(best_dask['median_gb_per_s'])} GB/s"],
    ]
    return "\n".join([
        README_BEGIN,
        f"Measured on {machine(run)}, {run['date']}, commit {run['commit']}:",
        "",
        *table(["workload", "measured"], rows),
        "",
        "Written by `scripts/performance-page.py` from `docs/bench/current/`; methods and the rest of",
        "the figures: [docs/performance.md](docs/performance.md).",
        README_END,
    ])


def with_readme_table(readme: str, block: str) -> str:
    start, end = readme.find(README_BEGIN), readme.find(README_END)
    if start < 0 or end < start:
        raise SystemExit(f"README.md: no {README_BEGIN} ... {README_END} block")
    return readme[:start] + block + readme[end + len(README_END):]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--page-out", type=Path, default=ROOT / "docs" / "performance.md")
    parser.add_argument("--readme-out", type=Path, default=ROOT / "README.md")
    parser.add_argument("--check", action="store_true", help="compare instead of writing")
    parser.add_argument("--take", type=Path, nargs="+", metavar="DIR",
                        help="first make the figures in these folders (scripts/gpu-check.sh figures and"
                             " figures-python) the current run")
    args = parser.parse_args()

    if args.take:
        take(args.take)
    notes = LabNotes(NOTES)
    text = page(notes)
    readme = with_readme_table((ROOT / "README.md").read_text(encoding="utf-8"), readme_table())
    if args.check:
        stale = [p for p, want in ((args.page_out, text), (args.readme_out, readme))
                 if not p.exists() or p.read_text(encoding="utf-8") != want]
        for p in stale:
            print(f"{p} differs from what scripts/performance-page.py writes", file=sys.stderr)
        return 1 if stale else 0
    args.page_out.write_text(text, encoding="utf-8")
    args.readme_out.write_text(readme, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
