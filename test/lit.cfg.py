# -*- Python -*-
import os
import shutil

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "MTE"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py", "Inputs"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.mte_obj_root, "test")

config.substitutions.append(("%mte_src_root", config.mte_src_root))
# The Python package (python/mte) loads this build's runtime, wherever the
# build directory is; by itself it would look for <repo>/build/lib.
config.environment["MTE_RUNTIME_LIBRARY"] = os.path.join(
    config.mte_obj_root, "lib", "libmte_runtime.so"
)
# Debian's interpreter: it has the onnx and numpy modules the tests need.
python = config.python_executable
if config.mte_sanitizer_runtime:
    # A sanitized build (-DMTE_ENABLE_SANITIZERS=ON, docs/testing.md): the
    # tools link the shared ASan runtime; Python does not, so it preloads it
    # to load libmte_runtime.so. Leak checking is off: LLVM's and Python's
    # globals outlive main. Allocations too large to serve return NULL, as
    # the runtime's out-of-memory tests expect of malloc. User poisoning is
    # off: LLVM's BumpPtrAllocator poisons its slabs in mte's instrumented
    # code but not in libMLIR.so, which allocates from the same slabs.
    config.available_features.add("asan")
    python = "env LD_PRELOAD=%s %s" % (config.mte_sanitizer_runtime, python)
    config.environment["ASAN_OPTIONS"] = (
        "detect_leaks=0:allocator_may_return_null=1:allow_user_poisoning=0"
    )
    config.environment["UBSAN_OPTIONS"] = "print_stacktrace=1"
config.substitutions.append(("%python", python))
if config.mte_enable_fuzzers:
    config.available_features.add("fuzzers")

llvm_config.with_system_environment(["HOME", "TMP", "TEMP"])
llvm_config.use_default_substitutions()

tool_dirs = [config.mte_tools_dir, config.llvm_tools_dir]
tools = ["mte-compile", "mte-opt", "mte-translate", "mte-run", "FileCheck", "not", "split-file"]
if config.mte_enable_fuzzers:
    tools += ["mte-fuzz-import", "mte-fuzz-runtime"]
llvm_config.add_tool_substitutions(tools, tool_dirs)

# Open MPI's launcher, for the tests of models started by mpirun (root may
# run it: the CI machine's user).
if shutil.which("mpirun"):
    config.available_features.add("mpirun")
    config.environment["OMPI_ALLOW_RUN_AS_ROOT"] = "1"
    config.environment["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] = "1"
    config.substitutions.append(("%mpirun", shutil.which("mpirun")))

# The CUDA backend: `ptxas` for tests that assemble the PTX mte emits, `cuda`
# where a GPU driver is installed (tests of what happens without one are
# UNSUPPORTED there).
cuda_home = os.environ.get("CUDA_HOME", "/usr/local/cuda")
ptxas = os.path.join(cuda_home, "bin", "ptxas")
if os.access(ptxas, os.X_OK):
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", ptxas))
try:
    import ctypes

    ctypes.CDLL("libcuda.so.1")
    config.available_features.add("cuda")
except OSError:
    pass
