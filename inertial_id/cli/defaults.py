"""Values the subcommands' parsers show in ``--help`` or take as defaults, restated from the modules
that own them.

Building the parser imports every subcommand module (``inertial-id --help`` lists them all), so the
subcommand modules may not import their commands' numerics at module level or in ``register``: the
owners below load numpy, cvxpy, scipy.stats, pydantic or pinocchio, seconds of CPU that every
command would pay. Each value here must equal its owner's; ``test/test_cli_imports.py`` checks that,
so a change in the owner fails the test instead of silently changing only the help text.
"""
from __future__ import annotations

# inertial_id.core.calibration.build
SAFETY_FACTOR = 2.0                     # SAFETY_FACTOR
OFFSET_MARGIN_NM = 2.0                  # OFFSET_MARGIN_NM
MAX_EFFORT_DELAY_S = 0.3                # max(EFFORT_DELAY_GRID_S)

# inertial_id.core.identification.solvers
SOLVERS = ("ls", "wls", "irls", "lmi")  # SOLVERS
DEFAULT_LMI_MARGIN = 1e-8               # DEFAULT_LMI_MARGIN

# inertial_id.core.studies.pmd
PMD_NOISE_LEVELS = ("high", "low", "moderate")   # sorted(NOISE_LEVELS)

# inertial_id.core.studies.static_baseline
BASELINE_POSES = 6                      # POSES
BASELINE_MAX_POSES = 8                  # len(WRIST_OFFSETS_RAD)

# inertial_id.core.studies.realdata
REALDATA_MASSES_KG = (1.81, 2.72, 3.63)  # MASSES_KG
REALDATA_BOOTSTRAP_REPLICATES = 200      # BOOTSTRAP_REPLICATES

# inertial_id.nodes.launch: LAUNCH_ARGUMENTS, SIM_ARGUMENTS and launch_arguments(), for the epilog of
# `inertial-id launch --help` (the module imports the robot profile machinery through params_files)
LAUNCH_ARGUMENTS = (
    ("robot_profile", None, "robot profile: a name in config/robots or a YAML path"),
    ("method", "", "estimator method (empty: the profile's identification.method)"),
    ("use_sim_time", "false", "run on /clock (rosbag replay, simulators) instead of the system clock"),
    ("joint_states_topic", "", "the driver's JointState topic (empty: profile sensing.joint_states_topic)"),
    ("wrench_topic", "", "the driver's F/T WrenchStamped topic (empty: profile sensing.wrench_topic)"),
    ("wrench_frame_id", "", "frame_id the driver stamps on the wrench (empty: profile sensing.wrench_frame_id)"),
)
SIM_ARGUMENTS = (("payload", "", "payload of the simulated arm, config/payloads.yaml (empty: the profile's)"),)


def launch_arguments(with_sim: bool) -> tuple:
    """As :func:`inertial_id.nodes.launch.launch_arguments`."""
    if not with_sim:
        return LAUNCH_ARGUMENTS
    return tuple((name, "true", description) if name == "use_sim_time" else (name, default, description)
                 for name, default, description in LAUNCH_ARGUMENTS) + SIM_ARGUMENTS
