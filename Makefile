# The README's two commands. Both create .venv and install tflaunch into it first.
# `make test` runs the lint gate (`make lint`) first, then the suite.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# mypy and import-linter see tflaunch.core/gui/resources through this symlink tree: the
# editable install's import hook is invisible to both (pyproject.toml, [tool.mypy]).
TYPECHECK := build/typecheck

.PHONY: run lint typecheck-tree system-deps test test-slow test-stacks test-gpu bench soak screenshots install-desktop pipx-check clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	# Bytecode for tflaunch's own modules, as a wheel install has: an editable install has none,
	# and under PYTHONDONTWRITEBYTECODE Python never writes it, so every start compiled them.
	$(BIN)/python -m compileall -q core gui resources >/dev/null
	touch $(STAMP)

run: $(STAMP)
	packaging/run-app.sh $(BIN)

typecheck-tree:
	@mkdir -p $(TYPECHECK)/tflaunch
	@for dir in core gui resources; do ln -sfn ../../../$$dir $(TYPECHECK)/tflaunch/$$dir; done

# The gate: style and imports (ruff), strict types in core, the GUI's mypy ratchet
# (.ci/mypy_ratchet.py, .ci/mypy-gui-baseline), the import contracts of core, and Python 3.8
# for what runs in the user's interpreter (the probe and the launch hook: vermin).
lint: $(STAMP) typecheck-tree
	$(BIN)/ruff check core gui tests .ci
	$(BIN)/mypy -p tflaunch.core
	$(BIN)/python .ci/mypy_ratchet.py
	PYTHONPATH=$(TYPECHECK) $(BIN)/lint-imports
	$(BIN)/vermin -q --no-tips --violations -t=3.8- core/probe core/settings/launch_hook

# Debian tools the tests need: the packaging validators (desktop-file-validate, appstreamcli)
# and Slurm (slurm-wlm), whose slurmctld and slurmd the cluster tests start (tests/cluster):
# installed here when missing, as root or through passwordless sudo.
DEBIAN_TOOLS := desktop-file-validate:desktop-file-utils appstreamcli:appstream slurmctld:slurm-wlm
system-deps:
	@missing=""; for pair in $(DEBIAN_TOOLS); do \
		command -v $${pair%%:*} >/dev/null || missing="$$missing $${pair##*:}"; \
	done; \
	if [ -n "$$missing" ]; then \
		if [ "$$(id -u)" = 0 ]; then sudo=""; elif sudo -n true 2>/dev/null; then sudo="sudo -n"; \
		else echo "make: the tests need Debian packages:$$missing. Install them: sudo apt-get install$$missing" >&2; exit 1; fi; \
		echo "make: installing Debian packages:$$missing"; \
		$$sudo apt-get install -y -q $$missing >/dev/null 2>&1 || \
			{ $$sudo apt-get update -q >/dev/null && $$sudo apt-get install -y -q $$missing >/dev/null; }; \
	fi

test: $(STAMP) system-deps lint
	# Two workers, one test file each at a time (files share their built models); the
	# children are real TensorFlow processes, so this halves the suite on two cores.
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest -q -n 2 --dist loadfile --durations=10 -m "not slow and not stacks"

# The slow tier: the model zoo (23 real architectures) and whole real sweeps.
test-slow: $(STAMP)
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest -q -n 2 --dist loadfile --durations=10 -m "slow and not stacks"

# The stack tier: one venv per stack researchers run (Python 3.8-3.13, TensorFlow 2.13-2.21, Keras 2
# and 3), built once from this machine's interpreters into ~/.cache/tflaunch-stacks (tests/stacks/
# stacks.py), then each program observed = unobserved, its clock, warm start, anatomy, doctor. One
# run at a time: the clock agreement (1 % or 20 ms) is measured, not raced. A stack whose Python
# is absent is skipped with its reason.
test-stacks: $(STAMP)
	$(BIN)/python -m tests.stacks.stacks
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest -q -p no:xdist -rs -s --durations=10 -m stacks tests/stacks

# The GPU tier: NVML, per-process GPU memory, and TensorFlow with CUDA where there is one.
# Every test that cannot run here says why (-rs). TFLAUNCH_GPU_PYTHON names another
# interpreter to measure (one with CuPy, PyTorch or TensorFlow built with CUDA).
test-gpu: $(STAMP)
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest -q -rs -s -m gpu tests/gpu

# The benchmarks need the tests' Debian tools (bench_cluster_overhead starts Slurm) and
# valgrind, whose callgrind counts what watching adds to a program (bench_watching_instructions).
bench: DEBIAN_TOOLS += valgrind:valgrind
bench: $(STAMP) system-deps
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
	TFLAUNCH_SCREENSHOTS=resources/screenshots QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest -q tests/gui \
		tests/cluster/test_cluster_in_window.py

# The desktop entry, AppStream metainfo and icon into the user's XDG folders, with Exec
# pointing at this checkout's .venv (a pipx or pip install puts tflaunch-gui on PATH and can
# use packaging/linux/ as it is).
XDG_DATA_HOME ?= $(HOME)/.local/share
APP_ID := io.github.tflaunch.tflaunch
install-desktop: $(STAMP)
	install -d $(XDG_DATA_HOME)/applications $(XDG_DATA_HOME)/metainfo $(XDG_DATA_HOME)/icons/hicolor/scalable/apps
	sed -e 's|^TryExec=tflaunch-gui|TryExec=$(abspath $(BIN))/tflaunch-gui|' \
	    -e 's|^Exec=tflaunch-gui|Exec=$(abspath $(BIN))/tflaunch-gui|' \
	    packaging/linux/$(APP_ID).desktop > $(XDG_DATA_HOME)/applications/$(APP_ID).desktop
	install -m 644 packaging/linux/$(APP_ID).metainfo.xml $(XDG_DATA_HOME)/metainfo/
	install -m 644 packaging/linux/$(APP_ID).svg $(XDG_DATA_HOME)/icons/hicolor/scalable/apps/
	-command -v update-desktop-database >/dev/null && update-desktop-database -q $(XDG_DATA_HOME)/applications
	-command -v gtk-update-icon-cache >/dev/null && gtk-update-icon-cache -q -t $(XDG_DATA_HOME)/icons/hicolor
	@echo "tflaunch is in the desktop's applications menu ($(XDG_DATA_HOME)/applications/$(APP_ID).desktop)."

# `pipx install .` from a clean clone of this checkout into a throw-away PIPX_HOME, then the
# installed commands answer (minutes: pipx downloads TensorFlow and PySide6 into its venv).
pipx-check: $(STAMP)
	packaging/pipx-check.sh $(BIN)

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .mypy_cache .ruff_cache .import_linter_cache
