#!/usr/bin/env bash
# Installs the Debian packages mte needs to build and test (with
# --sanitizers: the ones the sanitized build needs besides). Idempotent: when
# everything is present it only asks dpkg and returns in well under a second.
set -euo pipefail

packages=(
  cmake ninja-build g++ make
  llvm-22-dev llvm-22-tools libmlir-22-dev mlir-22-tools
  libonnx-dev libprotobuf-dev protobuf-compiler
  python3-onnx python3-numpy libonnx-testdata
  valgrind python3-pip binutils zlib1g-dev openmpi-bin
)

# --sanitizers: clang and its runtimes, for make check-asan and make fuzz.
if [[ "${1:-}" == "--sanitizers" ]]; then
  packages=(clang-22 libclang-rt-22-dev)
fi

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$p")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

echo "mte: installing missing packages: ${missing[*]}"
sudo=""
[[ $(id -u) -eq 0 ]] || sudo="sudo"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
