# The README's two commands. Both create .venv and install tflaunch into it first.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: run test bench screenshots clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

run: $(STAMP)
	packaging/run-app.sh $(BIN)

test: $(STAMP)
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest -q

bench: $(STAMP)
	@for script in tests/benchmarks/bench_*.py; do \
		module=$$(basename $$script .py); \
		echo "== $$module"; \
		QT_QPA_PLATFORM=offscreen $(BIN)/python -m tests.benchmarks.$$module || exit 1; \
	done

# Refresh the README's pictures from the GUI tests.
screenshots: $(STAMP)
	TFLAUNCH_SCREENSHOTS=resources/screenshots QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest -q tests/gui

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
