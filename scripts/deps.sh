# Shared by quickstart.sh and test.sh: make sure the Debian packages fabricsim
# needs are installed.  Installs them with apt-get when running as root;
# otherwise prints the exact command to run and exits non-zero.
# shellcheck shell=bash

FABRICSIM_PACKAGES=(
  build-essential cmake pkg-config git
  mpich libmpich-dev libhdf5-mpich-dev hdf5-tools
  libmetis-dev libeigen3-dev coinor-libcbc-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libtomlplusplus-dev libcli11-dev libfmt-dev libprotobuf-dev protobuf-compiler
  python3 python3-h5py python3-numpy python3-matplotlib
)
# What the test suite needs beyond them: the Slurm test starts a real
# single-node Slurm (test.sh; test_extra.sh installs them as root before
# running test.sh as another user, who could not).
FABRICSIM_TEST_PACKAGES=(slurmctld slurmd slurm-client munge)

fabricsim_missing_packages() {
  local missing=() p
  for p in "${FABRICSIM_PACKAGES[@]}" "$@"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
      missing+=("$p")
    fi
  done
  [ "${#missing[@]}" -eq 0 ] || printf '%s\n' "${missing[@]}"
}

fabricsim_ensure_packages() {
  local missing
  mapfile -t missing < <(fabricsim_missing_packages "$@")
  [ "${#missing[@]}" -eq 0 ] && return 0
  if [ "$(id -u)" -eq 0 ]; then
    echo "fabricsim: installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q >/dev/null
    apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
  else
    echo "fabricsim: missing Debian packages. Install them with:" >&2
    echo "  sudo apt-get install -y --no-install-recommends ${missing[*]}" >&2
    exit 1
  fi
}

# Configures (once) and builds the given targets in $FABRICSIM_BUILD_DIR.
fabricsim_build() {
  local src=$1
  shift
  local build=${FABRICSIM_BUILD_DIR:-$src/build}
  local jobs
  jobs=$(nproc 2>/dev/null || echo 2)
  if [ ! -f "$build/CMakeCache.txt" ]; then
    cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=Release >"$build.configure.log" 2>&1 || {
      cat "$build.configure.log" >&2
      echo "fabricsim: cmake configuration failed (log above)" >&2
      exit 1
    }
    rm -f "$build.configure.log"
  fi
  cmake --build "$build" --parallel "$jobs" "$@"
}
