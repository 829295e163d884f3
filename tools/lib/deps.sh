# Sourced by tools/test and tools/quickstart: installs the Debian packages
# libmlsba needs, only those that are missing, so a second run is instant.

# What each package is for:
#   build-essential cmake pkg-config   compiler and build
#   check                               unit tests (Check)
#   libjansson-dev                      platform and report JSON
#   ocl-icd-opencl-dev opencl-headers   OpenCL ICD loader and headers
#   pocl-opencl-icd                     an OpenCL device on machines without a GPU
#   libclblast-dev                      GEMM on OpenCL devices
#   libblis-dev libblis-pthread-dev     GEMM on CPU cores (the pthread build's
#                                       static archive reaches every kernel set)
#   libopenblas-pthread-dev             the cores' kernels where OpenBLAS's win a
#                                       shape class (loaded privately; optional),
#                                       and the OpenBLAS rows of mlsba-bench
#   liblapack-dev                       the panels of mlsba_getrf / mlsba_potrf
#   libhwloc-dev                        core discovery and pinning
#   libopenmpi-dev openmpi-bin          the MPI layer
#   libscalapack-openmpi-dev            the ScaLAPACK peer of mlsba-inpa
#   python3                             models/cluster/generate.py, benchmark reports
#   gnuplot-nox                         mlsba-bench --plot
#   python3                             tools/check-layers
#   doxygen                             the API reference: HTML and man 3 pages
#   clang-format                        tools/check-format (.clang-format)
# tools/test and benchmarks/peers/run-starpu add libstarpu-dev (the StarPU
# peer benchmark); the library itself never needs it.
MLSBA_PACKAGES=(
  build-essential cmake pkg-config check libjansson-dev
  ocl-icd-opencl-dev opencl-headers pocl-opencl-icd libclblast-dev
  libblis-dev libblis-pthread-dev libopenblas-pthread-dev liblapack-dev
  libhwloc-dev libopenmpi-dev openmpi-bin gnuplot-nox
  libscalapack-openmpi-dev python3 doxygen clang-format
)
# benchmarks/peers/run-factor-peers adds the LU and Cholesky peers, only
# when it runs: StarPU's examples, HPL (hpcc), libflame, and reference
# LAPACK (liblapack3, beside the system's fast LAPACK).
MLSBA_FACTOR_PEER_PACKAGES=(starpu-examples hpcc libflame1 liblapack3)
# Optional: tools/test and benchmarks/smpi-inpa add libsimgrid-dev (smpicc,
# smpirun: mlsba-inpa simulated at scale); without it the SMPI build and
# its test are skipped.
MLSBA_SIMGRID_PACKAGE=libsimgrid-dev

mlsba_missing_packages() {
  local p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
      grep -q "install ok installed" || printf '%s\n' "$p"
  done
}

# ensure_packages [extra packages...]
ensure_packages() {
  if ! command -v dpkg-query >/dev/null 2>&1; then
    echo "note: not a Debian system; assuming the dependencies are installed" >&2
    return 0
  fi
  local missing
  mapfile -t missing < <(mlsba_missing_packages "${MLSBA_PACKAGES[@]}" "$@")
  [ "${#missing[@]}" -eq 0 ] && return 0
  local sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
      sudo=(sudo)
    else
      echo "error: missing packages: ${missing[*]}" >&2
      echo "       run as root, or install them with apt-get" >&2
      return 1
    fi
  fi
  echo "==> installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  "${sudo[@]}" apt-get update -qq
  "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" \
    >/dev/null
}
