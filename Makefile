# The two commands of README.md:
#   make demo   set up what the demo needs (if not done) and run it headless: plant +
#               controller, summary, and figures of the run in demo/run_figures/
#   make test   set up everything (if not done) and run the whole test suite
# and, for bench/bench_flexible_simulation.py:
#   make bench-setup   set up everything (if not done) and add bench/requirements.txt
VENV ?= $(CURDIR)/.venv
ENV = . $(VENV)/fm_env.sh &&

.PHONY: setup setup-demo demo test bench-setup
setup:
	FM_VENV=$(VENV) bash tools/setup_env.sh

setup-demo:
	FM_VENV=$(VENV) FM_KERNELS=demo FM_TEST_DEPS=0 bash tools/setup_env.sh

demo: setup-demo
	$(ENV) python -m flexible_manipulator.nodes.bringup --local --timing-mode lockstep --duration 5 --record demo/run.mcap

test: setup
	$(ENV) python -m pytest -ra -n auto --durations=25

bench-setup: setup
	$(ENV) python -m pip install -r bench/requirements.txt
