"""An independent simulator of the arms: MuJoCo physics authored from the project's own models.

:mod:`.mjcf` writes an MJCF model (an XML string, compiled in memory) from a robot's pinocchio
model: one body per joint, the joint axes, the link inertials, the payload welded at the payload
frame as a body of its own, and what a real arm adds (armature, viscous damping, Coulomb friction
as ``frictionloss``). :mod:`.engine` steps it under a joint trajectory controller that does not
know the payload and produces :class:`~inertial_id.core.sim.Measurement` samples like
:class:`~inertial_id.core.sim.Simulator`, with the sensors a real arm has (output-side joint torque,
the wrist F/T sensor as MuJoCo force/torque sensors) and their errors (:mod:`.errors`).
:mod:`.harness` runs it into the offline estimation path and scores the boxes against the truth.

Nothing here is read by the estimators: the engine's parameters stay on the simulator's side.
``mujoco`` (PyPI) is imported only by these modules.
"""
