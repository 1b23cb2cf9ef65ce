# Two commands for a new user: `make run` serves the app, `make test` runs every test (and
# `make bench` the benchmarks).
# Both create .venv and install the pinned requirements on first use: with TensorFlow's CUDA
# libraries (requirements-gpu.txt, the and-cuda extra) when this machine has an NVIDIA GPU, the
# plain wheel (requirements.txt) otherwise; `make run GPU=1` or `GPU=0` overrides the detection.
# The stamp names the wheel installed (.venv/.runtime-cpu, .venv/.runtime-gpu), so a GPU that
# appears later upgrades the venv once and nothing else reinstalls it.
# Both also install this checkout into .venv, editable (`pip install -e . --no-deps`): the library
# snippets of the README then run as scripts from any folder, and an edit here is what they import.
# Keras's other backends, JAX and PyTorch (requirements-backends.txt, CPU builds; on a GPU
# machine requirements-backends-gpu.txt, their CUDA builds): `make test` installs them (the
# backend tests need them), `make run BACKENDS=1` installs them for the app (stamp
# .venv/.backends-cpu or -gpu), a plain `make run` does not (the app then names what is missing).
# The inference runtimes, ONNX Runtime and OpenVINO with the ONNX converter
# (requirements-runtimes.txt, the same on a GPU machine): `make test` installs them (the runtime
# tests need them), `make run RUNTIMES=1` for the app (stamp .venv/.runtimes), a plain `make run`
# does not (a page or command then says in one line how to install them).

PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
PORT ?= 8501
NVIDIA_SMI ?= nvidia-smi
NVIDIA_PROC ?= /proc/driver/nvidia
ifeq ($(origin GPU),undefined)
GPU := $(shell sh scripts/detect_gpu.sh "$(NVIDIA_SMI)" "$(NVIDIA_PROC)")
FOUND := $(if $(filter 1,$(GPU)),an NVIDIA GPU was found,no NVIDIA GPU was found)
else
FOUND := GPU=$(GPU)
endif
ifeq ($(GPU),1)
WHEEL := gpu
REQUIREMENTS := requirements-gpu.txt
WHY := $(FOUND): TensorFlow with its CUDA libraries, tensorflow[and-cuda] (GPU=0: the plain wheel)
else ifeq ($(GPU),0)
WHEEL := cpu
REQUIREMENTS := requirements.txt
WHY := $(FOUND): the plain TensorFlow wheel (GPU=1: tensorflow[and-cuda])
else
$(error GPU must be 1 (install tensorflow[and-cuda]) or 0 (the plain wheel); got '$(GPU)')
endif
RUNTIME := $(VENV)/.runtime-$(WHEEL)
DEV := $(VENV)/.dev-$(WHEEL)
BACKENDS_REQUIREMENTS := $(if $(filter gpu,$(WHEEL)),requirements-backends-gpu.txt,requirements-backends.txt)
BACKENDS_STAMP := $(VENV)/.backends-$(WHEEL)
RUNTIMES_STAMP := $(VENV)/.runtimes
BACKENDS ?= 0
ifeq ($(BACKENDS),1)
RUN_NEEDS := $(RUNTIME) $(BACKENDS_STAMP)
else ifeq ($(BACKENDS),0)
RUN_NEEDS := $(RUNTIME)
else
$(error BACKENDS must be 1 (install JAX and PyTorch for the app) or 0; got '$(BACKENDS)')
endif
RUNTIMES ?= 0
ifeq ($(RUNTIMES),1)
RUN_NEEDS += $(RUNTIMES_STAMP)
else ifneq ($(RUNTIMES),0)
$(error RUNTIMES must be 1 (install ONNX Runtime and OpenVINO for the app) or 0; got '$(RUNTIMES)')
endif

.PHONY: run test test-fast bench lint browser clean

run: $(RUN_NEEDS)
	$(BIN)/streamlit run app.py --server.port $(PORT)

# Every test, one worker process per core and one more (pytest-xdist): each file runs whole in
# one worker, in the order tests/conftest.py gives (the slowest files first, so the workers end
# together). The extra worker fills what the others leave idle while they wait on a browser, a
# server or a subprocess: with a worker per core, 1.5 of this 2-core machine's cores were busy
# on average. Measured on it: 2 workers 950 and 952 s, 3 workers 868, 909 and 931 s, every
# test passing in all five (a noisy machine: the gain is a few per cent, not more).
# TEST_WORKERS=0 runs them in this process, one after another.
TEST_WORKERS ?= $(shell echo $$(( $$(nproc) + 1 )))
test: $(DEV) browser
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder

# The quick loop: the pure modules and the model, no browser, no app, and TensorFlow only in
# the tests that import it, a worker per core. `make test` still runs everything, and is what
# CI runs. Measured on this 2-core machine (load under 1): 125 s in one process, 73 s in two.
FAST_TESTS := tests/test_config.py tests/test_imports.py tests/test_readme.py tests/test_fast_tier.py \
	tests/test_suite_order.py \
	tests/test_catalogue.py \
	tests/model tests/results tests/hardware/test_gpu.py tests/admission/test_limits.py \
	tests/admission/test_estimate.py
test-fast: $(DEV)
	HIERLSTM_TESTS=fast $(BIN)/python -m pytest -n $(shell nproc) --dist loadfile -m "not browser" $(FAST_TESTS)

# The benchmarks (benchmarks/, listed by `python -m benchmarks`), one after the other, on their
# defaults: every one this machine can run (Chromium for the browser ones), the others named
# with what they need. Long: minutes each, the soak ten. `make test` runs none of them. Each run
# is kept in benchmarks/results/NAME.json, and RESULTS.md is written from them, a failure too.
bench: $(DEV) browser
	$(BIN)/python -m benchmarks --all --save; status=$$?; \
	$(BIN)/python -m benchmarks --results; exit $$status

lint: $(DEV)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

# Debian's chromium for the browser tests (no browser download); skipped, with the reason,
# where it cannot be installed.
browser:
	@sh scripts/install_browser.sh

$(BIN)/python:
	@sh scripts/make_venv.sh "$(PYTHON)" "$(VENV)"

$(RUNTIME): requirements.txt $(REQUIREMENTS) | $(BIN)/python
	@echo "installing $(REQUIREMENTS): $(WHY)"
	$(BIN)/pip install --quiet --disable-pip-version-check -r $(REQUIREMENTS)
	$(BIN)/pip install --quiet --disable-pip-version-check --no-deps -e .
	touch $@

$(BACKENDS_STAMP): $(BACKENDS_REQUIREMENTS) | $(RUNTIME)
	@echo "installing $(BACKENDS_REQUIREMENTS): Keras's JAX and PyTorch backends ($(WHEEL) builds)"
	$(BIN)/pip install --quiet --disable-pip-version-check -r $(BACKENDS_REQUIREMENTS)
	touch $@

$(RUNTIMES_STAMP): requirements-runtimes.txt | $(RUNTIME)
	@echo "installing requirements-runtimes.txt: ONNX Runtime and OpenVINO, and the ONNX converter"
	$(BIN)/pip install --quiet --disable-pip-version-check -r requirements-runtimes.txt
	touch $@

# The backends' and runtimes' files are prerequisites, so a venv made before them installs them once.
$(DEV): requirements.txt requirements-dev.txt requirements-notebook.txt $(REQUIREMENTS) $(BACKENDS_REQUIREMENTS) requirements-runtimes.txt | $(BIN)/python
	@echo "installing requirements-dev.txt, $(REQUIREMENTS), $(BACKENDS_REQUIREMENTS) and requirements-runtimes.txt: $(WHY)"
	$(BIN)/pip install --quiet --disable-pip-version-check -r requirements-dev.txt -r $(REQUIREMENTS) -r $(BACKENDS_REQUIREMENTS) -r requirements-runtimes.txt
	$(BIN)/pip install --quiet --disable-pip-version-check --no-deps -e .
	touch $(RUNTIME) $(BACKENDS_STAMP) $@ $(RUNTIMES_STAMP)

clean:
	rm -rf $(VENV) .pytest_cache test-artifacts
