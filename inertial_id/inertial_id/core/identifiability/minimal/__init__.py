"""Minimal inertia parameters identified one joint at a time (Lin 1991; spec seed002_lin.md).

``constants`` (Lemma 1, Algorithm 1, rebuilt dynamics), ``minimal_set`` (Theorem 2),
``measurements`` (simulated one-joint motions), ``algorithm`` (Algorithm 2), ``stanford`` (the
paper's Stanford-arm experiment). The noise study is :mod:`inertial_id.studies.minimal_parameters_noise`.
"""
from .algorithm import Identification, algorithm2, rotational_row, translational_row
from .constants import (ConfigurationError, Constants, composite, gravity_torque, inertia_constants, mass_matrix,
                        rebuild_errors, varying_parts)
from .measurements import Noise, OneJointMotions, step_response
from .minimal_set import MinimalSet, minimal_set, restrict, values
from .stanford import STANFORD_TABLE1, stanford_configurations, table1

__all__ = ["Identification", "algorithm2", "rotational_row", "translational_row", "ConfigurationError",
           "Constants", "composite", "gravity_torque", "inertia_constants", "mass_matrix", "rebuild_errors",
           "varying_parts", "Noise", "OneJointMotions", "step_response", "MinimalSet", "minimal_set", "restrict",
           "values", "STANFORD_TABLE1", "stanford_configurations", "table1"]
