"""``config/params/<node>.yaml``: each managed node's declared parameters that do not depend on the
robot profile, at their defaults, in the ``ros2 param dump`` layout. The launch files pass them, so a
``ros2 param dump`` of a running node shows what it (and the planner's certifier) was given.

``python -m inertial_id.nodes.params_files`` writes them from the nodes themselves (each node
configured, inactive, for several profiles and a variant of the Gen3's whose fields that node
defaults come from are changed: a parameter whose value differs between them is the profile's, not
written); ``--check`` exits 1, naming the files, when they differ from that."""
from __future__ import annotations

import argparse
import importlib
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import rclpy
import yaml
from rclpy.lifecycle import TransitionCallbackReturn

from ..core.robot.model import profile_file
from ..defaults import SOURCE_ROOT
from .launch import isolated_ros_env

# the nodes the launch files start with a params file, and the profiles their defaults are taken over
NODE_CLASSES = {"sim_robot": "sim_robot.SimRobotNode",
                "regressor_builder": "regressor_builder.RegressorBuilderNode",
                "estimator": "estimator.EstimatorNode",
                "excitation_planner": "excitation_planner.ExcitationPlannerNode",
                "payload_compensator": "payload_compensator.PayloadCompensatorNode"}
PROFILES = ("kinova_gen3", "xarm7", "digit_arm")
# profile fields that node defaults come from and that are alike in all of PROFILES: changed in the variant
VARIANT = {("identification", "method"): "lmi", ("sensing", "filter_cutoff_hz"): 7.0, ("sim", "step_hz"): 2000}
# set by every launch file from its arguments, or rclpy's own
NOT_WRITTEN = ("robot_profile", "use_sim_time", "start_type_description_service")


def declared_parameters(profile: str) -> dict[str, dict]:
    """node -> {parameter: value} as each node declares it, configured for ``profile`` (rclpy is
    initialised here, in a domain of this process's choosing; call once per process)."""
    rclpy.init(args=["--ros-args", "-p", f"robot_profile:={profile}"])
    out = {}
    try:
        for node_name, where in NODE_CLASSES.items():
            module, cls = where.rsplit(".", 1)
            node = getattr(importlib.import_module(f"inertial_id.nodes.{module}"), cls)()
            try:
                if node.trigger_configure() == TransitionCallbackReturn.SUCCESS:
                    out[node_name] = {name: p.value for name, p in node.get_parameters_by_prefix("").items()}
            finally:
                node.destroy_node()
    finally:
        rclpy.try_shutdown()
    return out


def robot_independent(per_profile: list[dict[str, dict]]) -> dict[str, dict]:
    """node -> the parameters every profile's configuration declares with one value."""
    out = {}
    for node_name in NODE_CLASSES:
        seen = [p[node_name] for p in per_profile]
        common = {k: v for k, v in seen[0].items() if k not in NOT_WRITTEN and all(k in s and s[k] == v for s in seen)}
        out[node_name] = dict(sorted(common.items()))
    return out


def file_text(node_name: str, parameters: dict) -> str:
    header = (f"# {node_name}: its parameters that do not depend on the robot profile, at their defaults\n"
              "# (written by `python -m inertial_id.nodes.params_files`; the profile's are in config/robots/)\n")
    return header + yaml.safe_dump({f"/{node_name}": {"ros__parameters": parameters}}, sort_keys=False)


def _declarations(profiles) -> list[dict[str, dict]] | None:
    """Per profile, node -> the parameters its configuration declares, each read in a process of its own
    (rclpy is initialised once per process); None, with the reason on stderr, when one fails or a
    node refuses a configuration (what is written must hold for every profile)."""
    per_profile = []
    for profile in profiles:
        code = ("import json, sys; from inertial_id.nodes.params_files import declared_parameters; "
                f"json.dump(declared_parameters({profile!r}), sys.stdout)")
        # a ROS_HOME of its own: the estimator's state file goes there
        run = subprocess.run([sys.executable, "-c", code], env=isolated_ros_env(), capture_output=True, text=True,
                             timeout=300)
        if run.returncode != 0:
            print(f"params_files: {profile}: {run.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
            return None
        per_profile.append(json.loads(run.stdout.strip().splitlines()[-1]))
        refused = sorted(set(NODE_CLASSES) - set(per_profile[-1]))
        if refused:
            print(f"params_files: {Path(profile).name}: {', '.join(refused)} refused the configuration", file=sys.stderr)
            return None
    return per_profile


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare with the files instead of writing them")
    parser.add_argument("--out", type=Path, default=SOURCE_ROOT / "config" / "params")
    args = parser.parse_args(argv)

    variant = yaml.safe_load(open(profile_file(PROFILES[0])))
    for (section, key), value in VARIANT.items():
        variant[section][key] = value
    with tempfile.TemporaryDirectory(prefix="params_files_") as folder:
        variant_path = Path(folder) / f"{PROFILES[0]}_variant.yaml"
        variant_path.write_text(yaml.safe_dump(variant))
        per_profile = _declarations((*PROFILES, str(variant_path)))
    if per_profile is None:
        return 2
    stale = []
    for node_name, parameters in robot_independent(per_profile).items():
        path = args.out / f"{node_name}.yaml"
        text = file_text(node_name, parameters)
        if args.check:
            if not path.is_file() or path.read_text() != text:
                stale.append(str(path))
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
    if stale:
        print(f"params files differ from the nodes' declarations: {', '.join(stale)} "
              "(python -m inertial_id.nodes.params_files writes them)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
