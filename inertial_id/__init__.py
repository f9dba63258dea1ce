"""inertial_id: online identification of robot and payload inertial parameters.

Layers: ``inertial_id.core`` (ROS-free numerics), ``inertial_id.nodes`` (thin rclpy nodes),
``inertial_id.cli`` (the ``inertial-id`` command).
"""
from pkgutil import extend_path

# The generated message modules (inertial_id.msg) may live in another directory of sys.path than
# this source tree (pip route: built into the venv's site-packages); join them into one package.
__path__ = extend_path(__path__, __name__)

__version__ = "0.1.0"
