# The README's two commands. Both create .venv and install tflaunch into it first.
# `make test` runs the lint gate (`make lint`) first, then the suite.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# mypy and import-linter see tflaunch.core/gui/resources through this symlink tree: the
# editable install's import hook is invisible to both (pyproject.toml, [tool.mypy]).
TYPECHECK := build/typecheck

.PHONY: run lint typecheck-tree test bench soak screenshots clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

run: $(STAMP)
	packaging/run-app.sh $(BIN)

typecheck-tree:
	@mkdir -p $(TYPECHECK)/tflaunch
	@for dir in core gui resources; do ln -sfn ../../../$$dir $(TYPECHECK)/tflaunch/$$dir; done

# The gate: style and imports (ruff), strict types in core, the GUI's mypy ratchet
# (.ci/mypy_ratchet.py, .ci/mypy-gui-baseline), and the import contracts of core.
lint: $(STAMP) typecheck-tree
	$(BIN)/ruff check core gui tests .ci
	$(BIN)/mypy -p tflaunch.core
	$(BIN)/python .ci/mypy_ratchet.py
	PYTHONPATH=$(TYPECHECK) $(BIN)/lint-imports

test: $(STAMP) lint
	# Two workers, one test file each at a time (files share their built models); the
	# children are real TensorFlow processes, so this halves the suite on two cores.
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest -q -n 2 --dist loadfile --durations=10

bench: $(STAMP)
	@for script in tests/benchmarks/bench_*.py; do \
		module=$$(basename $$script .py); \
		echo "== $$module"; \
		QT_QPA_PLATFORM=offscreen $(BIN)/python -m tests.benchmarks.$$module || exit 1; \
	done

# 200 runs from one app instance (real and fake children; cancels, failures, timeouts),
# then what they left behind: processes, file descriptors, threads, RSS growth.
soak: $(STAMP)
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m tests.soak.soak_app

# Refresh the README's pictures from the GUI tests.
screenshots: $(STAMP)
	TFLAUNCH_SCREENSHOTS=resources/screenshots QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest -q tests/gui

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .mypy_cache .ruff_cache .import_linter_cache
