"""The README's commands run as written: every `sh` block of its CLI and GPU
sections, in order, in a scratch directory whose build/warpcrypt is the
binary under test. A line whose comment starts `# GPU` needs a CUDA device;
without one it must fail with exit status 5 (no device), never run on the
CPU in silence. Python lines (the benchmark drivers) are left to bench/.

As written the commands push 1.1 GB through enc, seal and open, about a
minute on a 2-core machine; CI runs them scaled down (1100M and 1G become
1100K and 1M, and speed measures for 0.1 s), and WARPCRYPT_README_FULL=1
runs them exactly as written."""

from __future__ import annotations

import os
import re
import subprocess

from conftest import REPO_ROOT

SECTIONS = ("## The CLI", "## The GPU backend")


def readme_commands() -> list[str]:
    text = (REPO_ROOT / "README.md").read_text()
    commands = []
    for heading in SECTIONS:
        section = text.split(heading + "\n", 1)[1].split("\n## ", 1)[0]
        for block in re.findall(r"```sh\n(.*?)```", section, re.S):
            for line in block.replace("\\\n", " ").splitlines():
                if line.strip() and not line.lstrip().startswith(("#", "python3 ")):
                    commands.append(line)
    return commands


def test_readme_commands_run_as_written(warpcrypt_binary, cuda_device_present, tmp_path):
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "warpcrypt").symlink_to(warpcrypt_binary)
    script = ["set -e -o pipefail"]
    full = os.environ.get("WARPCRYPT_README_FULL") == "1"
    for command in readme_commands():
        if not full:
            command = command.replace("1100M", "1100K").replace("--offset 1G", "--offset 1M")
            command = command.replace("-seconds 1", "-seconds 0.1")
        if re.search(r"#\s*GPU", command) and not cuda_device_present:
            script.append(f"{{ {command.split('#')[0]}; }} 2>/dev/null && exit 98 || test $? -eq 5 || exit 99")
        else:
            script.append(command)
    result = subprocess.run(["bash", "-c", "\n".join(script)], cwd=tmp_path, capture_output=True, timeout=600)
    assert result.returncode == 0, (result.returncode, result.stderr.decode()[-2000:], "\n".join(script))
    assert (tmp_path / "data.out").read_bytes() == (tmp_path / "data.bin").read_bytes()
    assert (tmp_path / "part.bin").stat().st_size == 4096
    assert len(readme_commands()) >= 20
