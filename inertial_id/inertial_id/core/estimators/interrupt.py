"""Giving up a bounds update between its LPs.

A final update over every kept row is hundreds of LPs (about 10 s on a 20 s xArm7 run); a
``~/reset`` that waits for it leaves the old box published that long. The thread that owns the
estimator runs its updates inside :func:`interruptible` with a predicate another thread may make
true; every LP asks it before it starts (:class:`~.bounds.IntervalBounds`' solver), and
:class:`Interrupted` then leaves the estimator half-updated: whoever interrupts it must discard it.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

__all__ = ["Interrupted", "interruptible", "raise_if_interrupted"]

_GIVE_UP: ContextVar[Callable[[], bool] | None] = ContextVar("inertial_id_give_up", default=None)


class Interrupted(Exception):
    """A bounds update was given up between two LPs; the estimator it ran on is half-updated."""


@contextmanager
def interruptible(give_up: Callable[[], bool]) -> Iterator[None]:
    """Within the block, in this thread only, an LP about to start raises :class:`Interrupted`
    once ``give_up()`` is true."""
    token = _GIVE_UP.set(give_up)
    try:
        yield
    finally:
        _GIVE_UP.reset(token)


def raise_if_interrupted() -> None:
    """:class:`Interrupted` when the innermost :func:`interruptible` block of this thread gives up."""
    give_up = _GIVE_UP.get()
    if give_up is not None and give_up():
        raise Interrupted("bounds update given up between two LPs")
