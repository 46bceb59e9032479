# The two commands of the README's quick start. Each sets up .venv by itself.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.steadybench-installed

.PHONY: demo test test-fast lint clean

# The venv's pip is upgraded first: the one python3 -m venv bundles (23.2 here) spent
# 15 s of processor time resolving the same install that the current one does in 8 s.
# pip byte-compiles every file it installs on one core, the libraries' own test suites (a
# third of the bytes) and the installers included; instead compileall writes the bytecode
# on every core and leaves those out (a file left out still imports, compiled in memory;
# _distutils_hack stays in: its .pth imports it in every Python process)
PYC_SKIP := site-packages/(.*/)?tests?/|site-packages/(pip|setuptools|pkg_resources)/
$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --disable-pip-version-check --quiet --upgrade pip
	$(BIN)/python -m pip install --disable-pip-version-check --quiet --no-compile -e '.[test]'
	$(BIN)/python -m compileall -qq -j 0 -x '$(PYC_SKIP)' \
		"$$($(BIN)/python -c 'import sysconfig; print(sysconfig.get_path("purelib"))')" \
		|| echo "some library files did not byte-compile (as pip, go on: they compile on import)"
	# bytecode for the package, as a regular install has (checked-hash pycs: never stale)
	$(BIN)/python -m compileall -q --invalidation-mode checked-hash src/steadybench
	touch $(STAMP)

# ruff and mypy are installed by the first `make lint` only (.ci/run runs it before the
# tests): `make test` on a fresh clone does not need them (import-linter is in the test extra)
LINTED := $(VENV)/.steadybench-lint-installed
$(LINTED): $(STAMP)
	$(BIN)/python -m pip install --disable-pip-version-check --quiet -e '.[test,lint]'
	touch $@

demo: $(STAMP)
	$(BIN)/steadybench demo

# pytest-benchmark, for the tests that check steadybench beside it, is installed apart and
# never on the venv's path: `make demo`'s venv must not have it (issue 28 item 4); those tests
# put this folder on their own pytest subprocess's PYTHONPATH (tests/peers.py)
PEERS  := $(VENV)/peers
$(PEERS)/.installed: $(STAMP)
	$(BIN)/python -m pip install --quiet --no-deps --upgrade --target $(PEERS) \
		'pytest-benchmark>=4,<6' 'py-cpuinfo>=9'
	touch $@

# three pytest-xdist workers on the 2-core VM, one test file each at a time (--dist
# loadfile: a file's module-scoped fixtures, such as the valgrind and PostgreSQL ones, are
# built once), the costliest files first (tests/file_costs.txt; --no-loadscope-reorder keeps
# that order). Many tests wait on subprocesses, sleeps and sockets: with two workers the
# cores were busy 1.6 of 2 on average, and a third worker took the suite from 323 s to 282 s
# on a quiet VM (same tree, same clone). TEST_WORKERS=0 runs the suite serially
TEST_WORKERS ?= 3
test: $(STAMP) $(PEERS)/.installed
	STEADYBENCH_TEST_PEERS=$(abspath $(PEERS)) $(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder

# the suite without the tests marked slow (pytest -m slow runs only those)
test-fast: $(STAMP) $(PEERS)/.installed
	STEADYBENCH_TEST_PEERS=$(abspath $(PEERS)) $(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder -m "not slow"

# ruff everywhere, mypy on the core packages ([tool.mypy] files), the import layers
# ([tool.importlinter]); .ci/run runs this before the tests and fails on a violation
lint: $(LINTED)
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/mypy
	$(BIN)/lint-imports

clean:
	rm -rf $(VENV) steadybench-demo build src/*.egg-info
