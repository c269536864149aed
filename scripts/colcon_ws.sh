#!/usr/bin/env bash
# Builds this checkout as a colcon workspace on the ROS 2 Jazzy prefix that
# scripts/ros2_prefix.sh makes: workcell_guard_msgs (ament_cmake) and the
# node (ament_cargo, colcon-ros-cargo, the r2r transport), into
# target/colcon/{build,install}; then
#
#   source target/ros2-jazzy/env.sh && source target/colcon/install/setup.bash
#   $(ros2 pkg prefix ...)  # no ros2cli wheels: the node is at
#   target/colcon/install/workcell_guard/lib/workcell_guard/workcell_guard
#
# This is docs/ros-workspace.md's recipe with the repository as the source
# space; extra arguments are colcon build's own options (e.g. --packages-select).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
[ -e target/ros2-jazzy/env.sh ] || bash scripts/ros2_prefix.sh >/dev/null
# shellcheck disable=SC1091
source target/ros2-jazzy/env.sh
mkdir -p target/colcon
cd target/colcon
# colcon-ros-cargo writes .cargo/config.toml into the working directory:
# here, not into the source tree.
exec colcon build --base-paths "$root" --build-base build --install-base install \
  --event-handlers console_direct- "$@" --cargo-args --features r2r
