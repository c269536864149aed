#!/usr/bin/env bash
# Makes a ROS 2 Jazzy prefix from its PyPI wheels, builds workcell_guard_msgs
# into it, and prints the environment to source for building and running the
# r2r transport (`cargo build --features r2r`) and rclpy peers against it:
#
#   bash scripts/ros2_prefix.sh            # makes target/ros2-jazzy, once
#   source target/ros2-jazzy/env.sh        # then, in each shell
#
# One argument overrides the prefix's directory. Run again, it only redoes
# what changed (the pinned wheels, the message definitions). Needs cmake,
# g++ and libclang-dev (installed with apt-get when run as root), Python
# 3.11 (the wheels are cp311) and the network for pip and apt only.
#
# The wheels are ROS 2 as rclpy needs it; four things a compiled rcl client
# needs besides are mended here:
# 1. r2r links `-lrmw_implementation`, which these wheels do not ship (their
#    rcl links rmw_fastrtps_cpp directly): lib/librmw_implementation.so is a
#    link to librmw_fastrtps_cpp.so;
# 2. the wheels' libraries find each other through RPATHs of the machine that
#    built them: env.sh puts lib/ and every site-packages/ros_*.libs on
#    LD_LIBRARY_PATH, as the wheels' Python bootstrapper does for Python;
# 3. their rcl links the messages' *__rosidl_generator_py libraries, which
#    need libpython's symbols: env.sh sets WG_LIBPYTHON, which the r2r build
#    links into the binary (build.rs);
# 4. their exported CMake targets name two include directories of the machine
#    that built them (/opt/python/cp311-cp311/...): made links to this
#    Python's include directory and the venv's numpy headers, so that
#    workcell_guard_msgs builds.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
prefix=${1:-target/ros2-jazzy}
mkdir -p "$prefix"
prefix=$(cd "$prefix" && pwd)
say() { echo "ros2_prefix: $*" >&2; }

# --- tools from apt ---------------------------------------------------------
need=()
command -v cmake >/dev/null 2>&1 || need+=(cmake)
command -v g++ >/dev/null 2>&1 || need+=(g++)
ls /usr/lib/llvm-*/lib/libclang.so* >/dev/null 2>&1 || need+=(libclang-dev)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    say "installing ${need[*]} (apt-get)"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
  else
    say "needs ${need[*]}: apt-get install ${need[*]}"
    exit 1
  fi
fi

# --- the wheels -------------------------------------------------------------
py=python3
ver=$($py -c 'import sys; print("%d.%d" % sys.version_info[:2])')
if [ "$ver" != 3.11 ]; then
  say "the ROS 2 Jazzy wheels are built for CPython 3.11; python3 is $ver"
  exit 1
fi
req=scripts/ros2-jazzy-requirements.txt
stamp=$prefix/.wheels-$(sha256sum "$req" | cut -c1-16)
if [ ! -e "$stamp" ]; then
  [ -x "$prefix/bin/python" ] || $py -m venv "$prefix"
  say "installing the pinned ROS 2 Jazzy wheels into $prefix"
  "$prefix/bin/python" -m pip install --quiet --disable-pip-version-check -r "$req"
  rm -f "$prefix"/.wheels-*
  touch "$stamp"
fi
site=$prefix/lib/python3.11/site-packages

# 1. rmw_implementation, for r2r's link line.
[ -e "$prefix/lib/librmw_implementation.so" ] || ln -s librmw_fastrtps_cpp.so "$prefix/lib/librmw_implementation.so"

# 4. The include directories the wheels' CMake targets name.
pyinc=$($py -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
npinc=$("$prefix/bin/python" -c 'import numpy; print(numpy.get_include())')
link_dir() { # target link
  if [ -e "$2" ]; then return; fi
  # A link left dangling (its prefix removed) is made again.
  if [ -L "$2" ]; then rm -f "$2"; fi
  if ! mkdir -p "$(dirname "$2")" 2>/dev/null || ! ln -s "$1" "$2" 2>/dev/null; then
    say "cannot make $2 (a link to $1) that the wheels' CMake files name: make it as root"
    exit 1
  fi
}
link_dir "$pyinc" /opt/python/cp311-cp311/include/python3.11
link_dir "$npinc" /opt/python/cp311-cp311/lib/python3.11/site-packages/numpy/_core/include

# 2. and 3. The environment.
libs=$prefix/lib
for d in "$site"/ros_*.libs "$site"/*.libs; do
  [ -d "$d" ] && case ":$libs:" in *":$d:"*) ;; *) libs=$libs:$d ;; esac
done
libpython=$($py -c 'import sysconfig, os; print(os.path.join(sysconfig.get_config_var("LIBDIR"), sysconfig.get_config_var("LDLIBRARY")))')
if [ ! -e "$libpython" ]; then
  say "no shared libpython at $libpython (the wheels' rcl needs one)"
  exit 1
fi
cat >"$prefix/env.sh" <<EOF
# ROS 2 Jazzy from PyPI wheels, with workcell_guard_msgs (scripts/ros2_prefix.sh).
export ROS_DISTRO=jazzy
export ROS_VERSION=2
export RMW_IMPLEMENTATION=rmw_fastrtps_cpp
export AMENT_PREFIX_PATH=$prefix
export CMAKE_PREFIX_PATH=$prefix
export PATH=$prefix/bin:\${PATH}
export PYTHONPATH=$site\${PYTHONPATH:+:\$PYTHONPATH}
export LD_LIBRARY_PATH=$libs:$(dirname "$libpython")\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}
export WG_LIBPYTHON=$libpython
EOF

# --- workcell_guard_msgs ----------------------------------------------------
msgs=interfaces/workcell_guard_msgs
msum=$(cat "$msgs"/CMakeLists.txt "$msgs"/package.xml "$msgs"/msg/* "$msgs"/srv/* | sha256sum | cut -c1-16)
mstamp=$prefix/.msgs-$msum
if [ ! -e "$mstamp" ]; then
  say "building workcell_guard_msgs into $prefix"
  build=$root/target/ros2-msgs-build
  rm -rf "$build"
  (
    # shellcheck disable=SC1091
    source "$prefix/env.sh"
    cmake -S "$msgs" -B "$build" -DCMAKE_INSTALL_PREFIX="$prefix" -DPython3_EXECUTABLE="$prefix/bin/python" \
      -DBUILD_TESTING=OFF -DCMAKE_BUILD_TYPE=Release >"$build.log" 2>&1 &&
      cmake --build "$build" -j 2 >>"$build.log" 2>&1 &&
      cmake --install "$build" >>"$build.log" 2>&1
  ) || { say "workcell_guard_msgs did not build: $build.log"; tail -30 "$build.log" >&2; exit 1; }
  rm -f "$prefix"/.msgs-*
  touch "$mstamp"
fi

cat "$prefix/env.sh"
