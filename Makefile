# Two entry points that work on a fresh Debian 12 machine:
#   make check   install missing packages, configure, build, run every test
#                and a short run of each fuzzer
#   make demo    install missing packages, configure, build, run the bundled example
# The GPU tests run where no compiler is (see docs/cuda.md):
#   make gpu-artifacts   here: compile the fixtures for CUDA, with references
#   make check-gpu       on the GPU machine, with $(BUILD_DIR)/gpu-check.tar.xz
#                        (or the folder itself) carried
# Sanitizers and fuzzing (docs/testing.md), in one clang build, $(ASAN_BUILD_DIR):
#   make check-asan      every test, with mte built with ASan and UBSan
#   make fuzz            the libFuzzer targets, each for FUZZ_SECONDS
# The benchmark (docs/performance.md):
#   make bench-artifacts here: generate and compile the benchmark models
#   make bench           on the GPU machine, with $(BUILD_DIR)/bench carried;
#                        results to $(BENCH_JSON) ($OUT/bench.json when $OUT is set)
# The multi-GPU benchmark (issue 17, docs/performance.md):
#   make bench-parallel-artifacts   here: every layout of $(PARALLEL_MODELS)
#   make bench-parallel  on a machine with several GPUs, with
#                        $(BUILD_DIR)/bench-parallel carried; the layouts that
#                        fit its GPUs (PARALLEL_ARGS="--only llama-4l" for one
#                        model), results to $(PARALLEL_JSON)
BUILD_DIR ?= build
CMAKE_BUILD_TYPE ?= Release
NINJA := ninja -C $(BUILD_DIR)

ASAN_BUILD_DIR ?= build-asan
FUZZ_SECONDS ?= 60
CLANG ?= /usr/bin/clang-22
CLANGXX ?= /usr/bin/clang++-22
# Extra ninja flags for the sanitized build, e.g. NINJA_FLAGS=-j1.
NINJA_FLAGS ?=

BENCH_JSON ?= $(if $(OUT),$(OUT),$(BUILD_DIR)/bench)/bench.json
PARALLEL_MODELS ?= llama-4l
comma := ,
PARALLEL_JSON ?= $(if $(OUT),$(OUT),$(BUILD_DIR)/bench-parallel)/parallel.json

.PHONY: all deps configure build check demo clean gpu-artifacts check-gpu \
	bench-artifacts bench bench-parallel-artifacts bench-parallel asan-deps \
	check-asan fuzz

all: build

deps:
	@utils/install-deps.sh

$(BUILD_DIR)/build.ninja: | deps
	cmake -G Ninja -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=$(CMAKE_BUILD_TYPE)

configure: deps $(BUILD_DIR)/build.ninja

build: configure
	$(NINJA)

# make check ends with a short run of each fuzzer (docs/testing.md), in the
# sanitized build; CHECK_FUZZ_SECONDS=0 leaves it out.
CHECK_FUZZ_SECONDS ?= 30

check: configure
	$(NINJA) check-mte
ifneq ($(CHECK_FUZZ_SECONDS),0)
	$(MAKE) fuzz FUZZ_SECONDS=$(CHECK_FUZZ_SECONDS)
endif

demo: build
	@utils/demo.sh $(BUILD_DIR)

asan-deps:
	@utils/install-deps.sh --sanitizers

# -O1 keeps the instrumented build and its tests fast. NDEBUG stays defined,
# as in the prebuilt libMLIR.so: some LLVM and MLIR classes change layout
# with it (llvm::Statistic, the base of mlir::Pass::Statistic).
$(ASAN_BUILD_DIR)/build.ninja: | deps asan-deps
	cmake -G Ninja -S . -B $(ASAN_BUILD_DIR) -DCMAKE_BUILD_TYPE=Release \
	  -DCMAKE_C_COMPILER=$(CLANG) -DCMAKE_CXX_COMPILER=$(CLANGXX) \
	  "-DCMAKE_C_FLAGS_RELEASE=-O1 -gline-tables-only -DNDEBUG" \
	  "-DCMAKE_CXX_FLAGS_RELEASE=-O1 -gline-tables-only -DNDEBUG" \
	  -DMTE_ENABLE_FUZZERS=ON

check-asan: deps asan-deps $(ASAN_BUILD_DIR)/build.ninja
	ninja -C $(ASAN_BUILD_DIR) $(NINJA_FLAGS) check-mte

fuzz: deps asan-deps $(ASAN_BUILD_DIR)/build.ninja
	ninja -C $(ASAN_BUILD_DIR) $(NINJA_FLAGS) mte-fuzz-import mte-fuzz-runtime
	utils/fuzz.sh $(ASAN_BUILD_DIR) $(FUZZ_SECONDS)

gpu-artifacts: build
	rm -rf $(BUILD_DIR)/gpu-check
	/usr/bin/python3 utils/gpu/prepare.py $(BUILD_DIR)/bin/mte-compile \
	  $(BUILD_DIR)/gpu-check --node-tests $(BUILD_DIR)/bin/mte-translate
	# What the GPU machine is sent: 54 MB compressed on 2026-12-07 (the
	# device tool carries 64 MiB in all).
	tar cJf $(BUILD_DIR)/gpu-check.tar.xz -C $(BUILD_DIR) gpu-check

# NCCL for the sharded models and cuDNN for attention: the system's, else
# PyTorch's wheels' (nvidia-nccl, nvidia-cudnn), which are not on the
# loader's path.
GPU_LIBS = $(if $(MTE_NCCL_LIBRARY),,MTE_NCCL_LIBRARY=$$(python3 -c \
  'import glob, nvidia.nccl as n; print(glob.glob(n.__path__[0] + "/lib/libnccl.so*")[0])' \
  2>/dev/null || echo libnccl.so.2)) NCCL_NVLS_ENABLE=0 \
  $(if $(MTE_CUDNN_LIBRARY),,MTE_CUDNN_LIBRARY=$$(python3 -c \
  'import glob, nvidia.cudnn as n; print(glob.glob(n.__path__[0] + "/lib/libcudnn.so.9")[0])' \
  2>/dev/null || echo libcudnn.so.9))

check-gpu:
	test -d $(BUILD_DIR)/gpu-check || tar xJf $(BUILD_DIR)/gpu-check.tar.xz -C $(BUILD_DIR)
	$(GPU_LIBS) python3 -X faulthandler utils/gpu/check.py $(BUILD_DIR)/gpu-check
	# Again with attention through cuDNN where it takes it (docs/cuda.md).
	$(GPU_LIBS) MTE_ATTENTION=auto python3 -X faulthandler utils/gpu/check.py \
	  $(BUILD_DIR)/gpu-check
	$(GPU_LIBS) python3 utils/gpu/check_nccl.py \
	  --runtime $(BUILD_DIR)/gpu-check/libmte_runtime.so \
	  --fixtures $(BUILD_DIR)/gpu-check
	python3 utils/gpu/check_attention.py $(BUILD_DIR)/gpu-check/libmte_runtime.so
	$(GPU_LIBS) python3 utils/gpu/check_attention.py \
	  $(BUILD_DIR)/gpu-check/libmte_runtime.so --route cudnn
	python3 utils/gpu/check_gemm_scales.py $(BUILD_DIR)/gpu-check/libmte_runtime.so
	python3 utils/gpu/check_amaxes.py $(BUILD_DIR)/gpu-check/libmte_runtime.so
	utils/gpu/sanitize.sh $(BUILD_DIR)/gpu-check

bench-artifacts: build
	bench/prepare.sh $(BUILD_DIR)

bench:
	cd $(BUILD_DIR)/bench && $(GPU_LIBS) LD_LIBRARY_PATH=. python3 run.py \
	  --out $(abspath $(BENCH_JSON)) $(BENCH_ARGS)
	cd $(BUILD_DIR)/bench && LD_LIBRARY_PATH=. python3 kernels.py run
	cd $(BUILD_DIR)/bench && LD_LIBRARY_PATH=. python3 fp8_gemm.py run

bench-parallel-artifacts: build
	/usr/bin/python3 bench/parallel.py build $(BUILD_DIR)/bench-parallel \
	  --compile $(BUILD_DIR)/bin/mte-compile --runtime $(BUILD_DIR)/lib \
	  --models $(subst $(eval) ,$(comma),$(strip $(PARALLEL_MODELS)))

# NVLink multicast stays off (the device notes: it can take a shared host's
# GPUs out of service); parallel.py sets the same in every rank it starts.
bench-parallel:
	cd $(BUILD_DIR)/bench-parallel && LD_LIBRARY_PATH=. NCCL_NVLS_ENABLE=0 \
	  TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 \
	  python3 parallel.py run --out $(abspath $(PARALLEL_JSON)) $(PARALLEL_ARGS)

clean:
	rm -rf $(BUILD_DIR)
