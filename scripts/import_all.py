"""Import every module of the inertial_id package, for an interpreter without ROS (make ci-humble:
Python 3.10 with requirements-humble.lock, where rclpy and the message packages would come from apt).

A module whose import fails only because a ROS package is absent (rclpy, launch, ament_index_python, a
message package, inertial_id_msgs among them) is listed as needing ROS; any
other failure (a name the interpreter lacks, a syntax it does not parse, a missing dependency) is
printed with its traceback and fails the run. Such a module is only checked up to its first ROS
import, but it is compiled whole first, so its syntax is checked all the same. ``__main__`` modules
are not imported: importing one runs the command.

Usage: import_all.py [PACKAGE]   (default inertial_id); exit status 1 when a module failed.
"""
import importlib
import pkgutil
import re
import sys
import traceback

# What a ROS install provides to Python and a plain venv lacks: packages by name, and the message
# packages by the suffixes of their names (sensor_msgs, std_srvs, rcl_interfaces, ...).
ROS_PACKAGES = {"rclpy", "launch", "launch_ros", "ament_index_python", "rosidl_runtime_py", "rpyutils"}
ROS_MESSAGE_PACKAGE = re.compile(r"[a-z0-9_]+_(msgs|srvs|interfaces)")


def missing_ros_package(exc: BaseException) -> str | None:
    """The ROS package whose absence ``exc`` reports, else None. Without ROS, ``launch`` can still
    resolve, to a namespace package: a folder of that name on the path (this repository's launch
    files); a name imported from it then fails as ImportError, not ModuleNotFoundError."""
    if not isinstance(exc, ImportError) or not exc.name:
        return None
    top = exc.name.split(".")[0]
    if not (top in ROS_PACKAGES or ROS_MESSAGE_PACKAGE.fullmatch(top)):
        return None
    if isinstance(exc, ModuleNotFoundError):
        return exc.name
    module = sys.modules.get(exc.name)
    return exc.name if module is not None and getattr(module, "__file__", None) is None else None


def main(argv=None) -> int:
    args = sys.argv[1:] if argv is None else argv
    package = args[0] if args else "inertial_id"
    root = importlib.import_module(package)
    imported, needs_ros, failed = [package], {}, {}
    # walk_packages imports each subpackage after yielding it, to list what it holds; the loop has
    # imported it (or recorded why it fails) by then, so walk_packages' own failure is ignored.
    for info in pkgutil.walk_packages(root.__path__, f"{package}.", onerror=lambda name: None):
        if info.name.rsplit(".", 1)[-1] == "__main__":
            continue
        try:
            importlib.import_module(info.name)
            imported.append(info.name)
        except Exception as exc:
            ros = missing_ros_package(exc)
            if ros:
                needs_ros[info.name] = ros
            else:
                failed[info.name] = traceback.format_exc()
    for name, ros in sorted(needs_ros.items()):
        print(f"needs ROS ({ros}): {name}")
    for name, trace in sorted(failed.items()):
        print(f"FAILED: {name}\n{trace}", file=sys.stderr)
    print(f"import_all: {package} on Python {sys.version.split()[0]}: {len(imported) + len(needs_ros) + len(failed)} "
          f"modules, {len(imported)} imported, {len(needs_ros)} need ROS, {len(failed)} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
