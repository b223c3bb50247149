# vaccel - top-level entry point. CMake + Ninja do the building underneath.
#
#   make deps    install every Debian package the build and tests need (idempotent)
#   make         build all userspace into build/
#   make test    deps + build + every test (unit, ABI, end to end, Python) + fuzzing + the VM
#                test + containers + the Debian packages installed and checked
#   make vm-test the kernel module and the whole system under qemu (tests/vm/run-vm-test.sh)
#   make test-gpu the Vulkan device tests on this machine's GPU (not lavapipe), the
#                CUDA device tests (skipped by `make test` without a CUDA GPU) and the
#                networks of tests/networks on both
#   make test-models  deps + torch + build, then real networks exported from torch
#                (ResNet-50, MobileNetV2, EfficientNet-B0, ViT-B/16, a TransformerEncoder,
#                a GPT-2-style decoder) imported from ONNX and checked against torch on
#                MODEL_DEVICES (default: cpu; tests/onnx/models/run-models.sh)
#   make fuzz    the fuzz targets, each for its own time (FUZZ_SECONDS=N: N each)
#   make bench   deps + build + benchmarks
#   make demo    deps + vacceld, vaccelctl and make-network only, then the daemon
#                serving ResNet-18 to two clients (CPU and a Vulkan device)
#   make container-test  vaccel in podman containers through CDI (tests/containers; root)
#   make install vacceld, vaccelctl, libvaccel and the system files (PREFIX, DESTDIR;
#                docs/install.md)
#   make dkms-install  vaccel.ko under DKMS for every installed kernel with headers
#                (KVERS="..." names them); make dkms-remove undoes it
#   make dkms-check    build vaccel.ko through DKMS for every installed linux-headers-*,
#                in a private DKMS tree (part of `make test`)
#   make checkpatch  the kernel's checkpatch.pl (linux-source-6.1) over kmod/ and uapi/:
#                no error and no warning (part of `make test`)
#   make deb     the Debian packages into build-deb/ (tools/make-deb.sh; docs/install.md)
#   make package-test  make deb, lintian, then install, check and purge the packages on
#                this machine (tests/packaging/run-package-test.sh; root)
#   make clean   remove build/

BUILD ?= build
# The VACCEL_STATIC=ON tree of the VM test's static programs.
STATIC_BUILD ?= $(BUILD)-static
FUZZ_BUILD ?= build-fuzz
# The Debian packages and their build tree (tools/make-deb.sh).
DEB_BUILD ?= build-deb
FUZZ_TARGETS := fuzz_codec fuzz_kernel_args fuzz_daemon fuzz_tosa
# How long each target runs; FUZZ_SECONDS, when given, overrides them all.
FUZZ_SECONDS_fuzz_codec := 20
FUZZ_SECONDS_fuzz_kernel_args := 20
FUZZ_SECONDS_fuzz_daemon := 60
FUZZ_SECONDS_fuzz_tosa := 30
fuzz_seconds = $(or $(FUZZ_SECONDS),$(FUZZ_SECONDS_$(1)))
CMAKE_FLAGS ?=
SHELL := /bin/bash

# Every build tree (build/, the static, fuzz and package trees) compiles
# through ccache when it is installed (make deps installs it): CMake reads
# the launcher from the environment at configure time. Paths are hashed
# relative to the tree, so a fresh clone elsewhere reuses what an earlier
# build of the same sources compiled (its objects' debug info may then name
# the directory of the build that compiled them first).
ifneq ($(shell command -v ccache 2>/dev/null),)
export CMAKE_C_COMPILER_LAUNCHER := ccache
export CMAKE_CXX_COMPILER_LAUNCHER := ccache
export CCACHE_BASEDIR := $(CURDIR)
export CCACHE_NOHASHDIR := 1
endif

DEPS := build-essential cmake ninja-build pkg-config \
	liburing-dev flatbuffers-compiler libflatbuffers-dev \
	libcmocka-dev libbenchmark-dev libcli11-dev nlohmann-json3-dev \
	libfmt-dev libspdlog-dev libopenblas-dev libopenblas-pthread-dev libeigen3-dev \
	libtomlplusplus-dev libvulkan-dev mesa-vulkan-drivers glslc libdrm-dev vulkan-tools \
	python3 python3-numpy pybind11-dev python3-dev python3-pytest libdlpack-dev \
	libonnx-dev libprotobuf-dev libonnx-testdata \
	libopenblas0-pthread libclang-rt-14-dev binutils file \
	linux-headers-cloud-amd64 linux-image-cloud-amd64 qemu-system-x86 busybox-static cpio \
	linux-headers-6.12-cloud-amd64 linux-image-6.12-cloud-amd64 gcc-multilib libsystemd-dev dkms \
	linux-source-6.1 podman runc \
	debhelper dh-dkms dh-python dpkg-dev fakeroot lintian rsync git systemd ccache \
	bash-completion zsh

# What `make test-models` adds to DEPS: torch to export the models (Debian's
# 1.13; about 250 packages, so `make test` leaves them out).
MODEL_DEPS := python3-torch python3-torchvision python3-onnx
MODEL_DEVICES ?= cpu

.PHONY: all build deps test test-gpu test-models bench demo clean configure fuzz vm-test \
	install dkms-install dkms-remove dkms-check checkpatch deb package-test container-test

all: build

deps:
	@missing=$$(for p in $(DEPS) $(EXTRA_DEPS); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
		echo "deps: installing $$missing"; \
		SUDO=$$( [ $$(id -u) -eq 0 ] || echo sudo ); \
		$$SUDO apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends $$missing; \
	else echo "deps: all present"; fi

$(BUILD)/build.ninja:
	cmake -S . -B $(BUILD) -G Ninja $(CMAKE_FLAGS)

configure: $(BUILD)/build.ninja

build: configure
	cmake --build $(BUILD)

test: deps
	$(MAKE) build
	cd $(BUILD) && ctest --output-on-failure --timeout 300
	$(MAKE) fuzz
	$(MAKE) vm-test
	$(MAKE) container-test
	$(MAKE) dkms-check
	$(MAKE) checkpatch
	$(MAKE) package-test

test-models:
	$(MAKE) deps EXTRA_DEPS="$(MODEL_DEPS)"
	$(MAKE) build
	tests/onnx/models/run-models.sh $(BUILD) $(MODEL_DEVICES)

# The Vulkan tests of `make test` (run there on lavapipe) on the machine's
# own GPU driver, then the CUDA tests (which `make test` lists as skipped
# without a CUDA GPU); fails without a Vulkan GPU or without a CUDA GPU
# (CUDA_GPU_TESTS=0 leaves the CUDA tests out, on a GPU that has no CUDA).
CUDA_GPU_TESTS ?= 1
test-gpu: deps
	$(MAKE) build
	tests/vulkan/run-gpu-tests.sh $(BUILD)/tests/vulkan $(BUILD)/tools/vaccelctl/vaccelctl
	if [ "$(CUDA_GPU_TESTS)" = 1 ]; then tests/cuda/run-gpu-tests.sh $(BUILD)/tests/cuda; fi
	tests/networks/run-gpu-tests.sh $(BUILD) vulkan:0 $$( [ "$(CUDA_GPU_TESTS)" = 1 ] && echo cuda:0 )

# Builds the module and the static programs, boots the cloud kernel under
# qemu (TCG) and runs every step inside; fails on any missing step.
vm-test: deps
	VACCEL_STATIC_BUILD=$(STATIC_BUILD) tests/vm/run-vm-test.sh

# Each target runs its time from the corpus kept in $(FUZZ_BUILD)/corpus/TARGET,
# also reading the seeds the build generates for it (tests/fuzz/seeds/TARGET)
# where there are some; any crash, leak, sanitizer report or timeout fails the run.
fuzz:
	[ -f $(FUZZ_BUILD)/build.ninja ] || cmake -S . -B $(FUZZ_BUILD) -G Ninja -DVACCEL_FUZZ=ON $(CMAKE_FLAGS)
	cmake --build $(FUZZ_BUILD) --target $(FUZZ_TARGETS)
	for run in $(foreach t,$(FUZZ_TARGETS),$(t):$(call fuzz_seconds,$(t))); do \
		t=$${run%%:*}; seconds=$${run##*:}; seeds=$(FUZZ_BUILD)/tests/fuzz/seeds/$$t; \
		mkdir -p $(FUZZ_BUILD)/corpus/$$t && \
		$(FUZZ_BUILD)/tests/fuzz/$$t -max_total_time=$$seconds -timeout=10 -rss_limit_mb=2048 \
			-artifact_prefix=$(FUZZ_BUILD)/ -print_final_stats=1 $(FUZZ_BUILD)/corpus/$$t \
			$$( [ -d $$seeds ] && echo $$seeds ) 2>&1 | tail -n 12; \
		test $${PIPESTATUS[0]} -eq 0 || exit 1; \
	done

bench: deps
	$(MAKE) build
	$(BUILD)/benchmarks/bench_codec --benchmark_min_time=0.05
	$(BUILD)/benchmarks/bench_handles --benchmark_min_time=0.05
	$(BUILD)/benchmarks/bench_seqpacket_floor
	$(BUILD)/benchmarks/bench_roundtrip
	$(BUILD)/benchmarks/bench_throughput
	$(BUILD)/benchmarks/bench_transfer
	$(BUILD)/benchmarks/bench_fastpath
	$(BUILD)/benchmarks/bench_fairness
	$(BUILD)/benchmarks/bench_cpu_ops benchmarks/numpy_baseline.py

# Only what the demo runs: the daemon, vaccelctl and make-network (not the
# tests), with ninja's [step/steps] lines as it goes.
DEMO_TARGETS := vacceld vaccelctl make-network
demo: deps configure
	@echo "demo: building $(DEMO_TARGETS) ($$(ninja -C $(BUILD) -n $(DEMO_TARGETS) | grep -c '^\[') steps to go)"
	cmake --build $(BUILD) --target $(DEMO_TARGETS)
	examples/run-demo.sh $(BUILD)

# vaccel in real podman containers through CDI (root; the static vaccelctl
# goes into the test image).
container-test: deps
	cmake --build $(BUILD) --target vacceld vaccelctl
	[ -f $(STATIC_BUILD)/build.ninja ] || cmake -S . -B $(STATIC_BUILD) -G Ninja -DVACCEL_STATIC=ON $(CMAKE_FLAGS)
	cmake --build $(STATIC_BUILD) --target vaccelctl
	tests/containers/run-container-test.sh $(BUILD) $(STATIC_BUILD)

clean:
	rm -rf $(BUILD) $(FUZZ_BUILD) $(STATIC_BUILD) $(DEB_BUILD)

# Installation (docs/install.md). CMake's install rules put the programs,
# libvaccel (with its headers, vaccel.pc and CMake package) under PREFIX, in
# the folders GNUInstallDirs names (bin, sbin, lib, include; change them at
# configure time, CMAKE_FLAGS="-DCMAKE_INSTALL_LIBDIR=..."). The systemd,
# udev, modules-load and sysusers files go under PREFIX/lib, where systemd
# and udev read them for PREFIX /usr/local and /usr alike; the config in
# /etc/vaccel, where vacceld and the unit look, installed only when absent.
# DESTDIR stages everything elsewhere; without it, the groups are created
# and systemd, udev and the loader's cache are told.
PREFIX ?= /usr/local
DESTDIR ?=
# Fixed: CMake's install rule puts vacceld there, and vaccel-cuda-host beside it.
SBINDIR := $(PREFIX)/sbin
DOCDIR ?= $(PREFIX)/share/doc/vaccel
SYSTEMD_UNIT_DIR ?= $(PREFIX)/lib/systemd/system
UDEV_RULES_DIR ?= $(PREFIX)/lib/udev/rules.d
MODULES_LOAD_DIR ?= $(PREFIX)/lib/modules-load.d
SYSUSERS_DIR ?= $(PREFIX)/lib/sysusers.d
TMPFILES_DIR ?= $(PREFIX)/lib/tmpfiles.d
CONFIG_DIR := /etc/vaccel
# What `make install` builds: vaccel-cuda-host only where CUDA was configured.
INSTALL_TARGETS = vacceld vaccelctl vaccel \
	$(shell ninja -C $(BUILD) -t targets all 2>/dev/null | grep -q '^vaccel-cuda-host:' && echo vaccel-cuda-host)

install: configure
	cmake --build $(BUILD) --target $(INSTALL_TARGETS)
	DESTDIR=$(DESTDIR) cmake --install $(BUILD) --prefix $(PREFIX)
	@# The system files; the unit names the programs and docs where they now are.
	install -d $(DESTDIR)$(SYSTEMD_UNIT_DIR)
	sed -e 's|/usr/sbin/vacceld|$(SBINDIR)/vacceld|' -e 's|/usr/share/doc/vaccel|$(DOCDIR)|g' \
		dist/vacceld.service >$(DESTDIR)$(SYSTEMD_UNIT_DIR)/vacceld.service
	install -D -m 0644 dist/udev/60-vaccel.rules $(DESTDIR)$(UDEV_RULES_DIR)/60-vaccel.rules
	install -D -m 0644 dist/modules-load.d/vaccel.conf $(DESTDIR)$(MODULES_LOAD_DIR)/vaccel.conf
	install -D -m 0644 dist/sysusers.d/vaccel.conf $(DESTDIR)$(SYSUSERS_DIR)/vaccel.conf
	install -D -m 0644 dist/tmpfiles.d/vaccel.conf $(DESTDIR)$(TMPFILES_DIR)/vaccel.conf
	install -d $(DESTDIR)$(DOCDIR)
	install -m 0644 dist/vacceld.toml docs/install.md docs/protocol.md $(DESTDIR)$(DOCDIR)/
	@if [ -e $(DESTDIR)$(CONFIG_DIR)/vacceld.toml ]; then \
		echo "install: $(DESTDIR)$(CONFIG_DIR)/vacceld.toml kept (the shipped one is $(DOCDIR)/vacceld.toml)"; \
	else install -D -m 0644 dist/vacceld.toml $(DESTDIR)$(CONFIG_DIR)/vacceld.toml; fi
	@if [ -z "$(DESTDIR)" ]; then \
		set -e; ldconfig; \
		systemd-sysusers $(SYSUSERS_DIR)/vaccel.conf; \
		systemd-tmpfiles --create $(TMPFILES_DIR)/vaccel.conf; \
		if [ -d /run/systemd/system ]; then systemctl daemon-reload; fi; \
		if udevadm control --ping 2>/dev/null; then udevadm control --reload; \
			udevadm trigger --subsystem-match=misc --action=add; fi; \
		echo "install: done; next: make dkms-install, then systemctl enable --now vacceld (docs/install.md)"; \
	fi

# vaccel.ko through DKMS (kmod/dkms.conf, tools/kmod-dkms.sh). KVERS: the
# kernels to build for; by default every installed one with its headers
# (dkms-install), every linux-headers-* (dkms-check).
KVERS ?=
dkms-install:
	tools/kmod-dkms.sh install $(KVERS)

dkms-remove:
	tools/kmod-dkms.sh remove

dkms-check:
	tools/kmod-dkms.sh check $(KVERS)

# Debian packages (debian/). DEB_CLEAN=1 starts from an empty build tree;
# DEB_DBGSYM=1 also builds the -dbgsym packages.
deb:
	VACCEL_DEB_DIR=$(abspath $(DEB_BUILD)) VACCEL_DEB_CLEAN=$(DEB_CLEAN) VACCEL_DEB_DBGSYM=$(DEB_DBGSYM) \
		tools/make-deb.sh

package-test:
	VACCEL_DEB_DIR=$(abspath $(DEB_BUILD)) VACCEL_DEB_CLEAN=$(DEB_CLEAN) tests/packaging/run-package-test.sh

# checkpatch.pl and the word lists it reads, taken from Debian's kernel
# source tarball into the build tree; --strict is not used (kernel style as
# the kernel's maintainers apply it to drivers).
CHECKPATCH_DIR := $(BUILD)/checkpatch
checkpatch:
	@if [ ! -x $(CHECKPATCH_DIR)/linux-source-6.1/scripts/checkpatch.pl ]; then \
		mkdir -p $(CHECKPATCH_DIR) && tar -C $(CHECKPATCH_DIR) -xf /usr/src/linux-source-6.1.tar.xz \
			linux-source-6.1/scripts/checkpatch.pl linux-source-6.1/scripts/spelling.txt \
			linux-source-6.1/scripts/const_structs.checkpatch; fi
	@# Run from each file's own folder, as a kernel maintainer would name it.
	@failed=0; cp=$(abspath $(CHECKPATCH_DIR))/linux-source-6.1/scripts/checkpatch.pl; \
	for f in kmod/*.c kmod/*.h uapi/*.h; do \
		(cd $$(dirname $$f) && $$cp --no-tree --quiet --show-types -f $$(basename $$f)) || failed=1; \
	done; \
	if [ $$failed = 0 ]; then echo "checkpatch: kmod/ and uapi/ are clean"; else exit 1; fi
