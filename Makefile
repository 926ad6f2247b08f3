# Two entry points that work on a fresh Debian 12 machine:
#   make check   install missing packages, configure, build, run every test
#   make demo    install missing packages, configure, build, run the bundled example
BUILD_DIR ?= build
CMAKE_BUILD_TYPE ?= Release
NINJA := ninja -C $(BUILD_DIR)

.PHONY: all deps configure build check demo clean

all: build

deps:
	@utils/install-deps.sh

$(BUILD_DIR)/build.ninja: | deps
	cmake -G Ninja -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=$(CMAKE_BUILD_TYPE)

configure: deps $(BUILD_DIR)/build.ninja

build: configure
	$(NINJA)

check: configure
	$(NINJA) check-mte

demo: build
	@utils/demo.sh $(BUILD_DIR)

clean:
	rm -rf $(BUILD_DIR)
