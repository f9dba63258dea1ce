"""The error of a robot description that cannot be used, in a module of its own: the command's
dispatcher (:mod:`inertial_id.cli`) reports it in one line, and reads this module without loading the
profile schema (pydantic, numpy), which ``inertial-id --help`` would pay for."""


class ProfileError(ValueError):
    """A robot profile, payload or model file that cannot be used; the message names the problem."""
