# Two commands for a new user: `make run` serves the app, `make test` runs every test.
# Both create .venv and install the pinned requirements on first use.

PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
PORT ?= 8501

.PHONY: run test lint browser clean

run: $(VENV)/.runtime
	$(BIN)/streamlit run app.py --server.port $(PORT)

test: $(VENV)/.dev browser
	$(BIN)/python -m pytest

lint: $(VENV)/.dev
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

# Debian's chromium for the browser tests (no browser download); skipped, with the reason,
# where it cannot be installed.
browser:
	@sh scripts/install_browser.sh

$(BIN)/python:
	@sh scripts/make_venv.sh "$(PYTHON)" "$(VENV)"

$(VENV)/.runtime: requirements.txt | $(BIN)/python
	$(BIN)/pip install --quiet --disable-pip-version-check -r requirements.txt
	touch $@

$(VENV)/.dev: requirements.txt requirements-dev.txt | $(BIN)/python
	$(BIN)/pip install --quiet --disable-pip-version-check -r requirements-dev.txt
	touch $(VENV)/.runtime $@

clean:
	rm -rf $(VENV) .pytest_cache test-artifacts
