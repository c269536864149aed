#!/usr/bin/env bash
# The test command (see README.md): installs the Python oracles the tests
# compare against (pinned in tests/oracle/requirements.txt), then runs every
# test. Nothing here leaves the machine except the package downloads.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore -r tests/oracle/requirements.txt
cargo test --workspace "$@"
