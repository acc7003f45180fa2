# The two commands of README.md:
#   make demo   set up (if needed) and run the headless demo: plant + controller, summary
#   make test   set up (if needed) and run the whole test suite
VENV ?= $(CURDIR)/.venv
ENV = . $(VENV)/fm_env.sh &&

.PHONY: setup demo test
setup:
	FM_VENV=$(VENV) bash tools/setup_env.sh

demo: setup
	$(ENV) python -m flexible_manipulator.nodes.bringup --local --timing-mode lockstep --duration 5

test: setup
	$(ENV) python -m pytest -ra
