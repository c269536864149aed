#!/usr/bin/env bash
# The test command (see README.md): installs Debian's chromium (for the
# report's screenshot test) and the Python oracles the tests compare against
# (pinned in tests/oracle/requirements.txt), then runs every test. Nothing
# here leaves the machine except the package downloads.
set -euo pipefail
cd "$(dirname "$0")/.."
# Headless Chromium (Debian's package) for the report's screenshot test.
if ! command -v chromium >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  else
    echo "the report's screenshot test needs chromium (apt-get install chromium)" >&2
  fi
fi
python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore -r tests/oracle/requirements.txt
cargo test --workspace "$@"
