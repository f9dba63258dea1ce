"""The one interface every payload estimator offers, and the registry of methods by name.

An :class:`Estimator` takes RegressorSample rows of the kinds it consumes, keeps a box and a point
estimate, and saves and restores its state; the estimator node and the offline pipeline hold one
and call nothing else. A method is an :class:`EstimationMethod` subclass registered under its name
with :func:`register`; :func:`method_class` is the only place a name is looked up.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from typing import ClassVar, Protocol, runtime_checkable

from ..robot.profile import ProfileError


@runtime_checkable
class Estimator(Protocol):
    """Rows ``A theta = b`` in, a payload estimate with its box out (what the node and offline use)."""

    kinds: tuple[str, ...]        # RegressorSample kinds it consumes; the others are not its
    column_names: list[str]       # the parameter_names its rows must carry, in order
    needs_kinematics: bool        # wrench rows must carry the sensor kinematics of each sample
    needs_acceleration_bound: bool   # wrench rows must carry their acceleration error bound
    bounds_raised: int            # row error bounds raised to the profile's floor so far

    @property
    def refused(self) -> dict[str, int]:
        """Rows the estimator itself refused (after the intake checks), counted by reason."""

    def add(self, kind: str, A, b, e, sigma, samples: int, kinematics=None, acceleration_bound=None) -> None:
        """Rows of ``kind`` with error bounds ``e`` and noise ``sigma`` from ``samples`` samples;
        wrench rows: ``acceleration_bound`` ``(samples, 6)`` (RegressorSample.acceleration_bound)."""

    def update_bounds(self) -> None:
        """Fold the rows added since the last call into the box."""

    def final_update_bounds(self) -> None:
        """At the end of the data: fold in what is left, then the box of one LP over every row kept."""

    def result(self):
        """The current :class:`~.payload.PayloadEstimate`."""

    def support(self, C):
        """Upper bounds of ``c . pi`` over every payload the last final LP admits, one per row of
        ``C`` (payload parameters); None for a method without one LP over its rows."""

    def state(self) -> dict | None:
        """What a restart needs (None: this method's state is not saved)."""

    def restore(self, state: dict) -> None:
        """Continue from :meth:`state`; ValueError when it does not fit."""


class EstimationMethod(ABC):
    """A method by name: the rows it consumes on a robot and the :class:`Estimator` it builds there."""

    name: ClassVar[str] = ""
    kinds: ClassVar[tuple[str, ...]] = ()     # the kinds it consumes, for a method whatever the robot

    @classmethod
    def row_kinds(cls, robot) -> tuple[str, ...]:
        """The RegressorSample kinds this method consumes on ``robot`` (what the builder must form):
        :attr:`kinds` for a method that consumes the same on every robot."""
        return cls.kinds

    @classmethod
    @abstractmethod
    def create(cls, robot, max_bound_rows: int | None = None) -> Estimator:
        """The estimator on ``robot``; ProfileError when the profile cannot serve this method."""


_METHODS: dict[str, type[EstimationMethod]] = {}


def register(name: str):
    """Class decorator: the method ``name`` is this class."""
    def add(cls: type[EstimationMethod]) -> type[EstimationMethod]:
        if name in _METHODS:
            raise ValueError(f"estimation method '{name}' registered twice")
        cls.name = name
        _METHODS[name] = cls
        return cls
    return add


def method_names() -> tuple[str, ...]:
    """The registered method names, in registration order."""
    return tuple(_METHODS)


def method_class(name: str) -> type[EstimationMethod]:
    """The class registered as ``name``; ProfileError (one line listing the choices) otherwise."""
    try:
        return _METHODS[name]
    except (KeyError, TypeError):
        raise ProfileError(f"unknown estimation method '{name}' (choose from {', '.join(_METHODS)})") from None
