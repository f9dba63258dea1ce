"""Independent tasks of a study, run in order, in local processes, or on a Dask cluster.

``map_tasks(func, args, workers, scheduler)`` returns ``[func(a) for a in args]`` in the order of
``args`` whichever way it runs: ``scheduler`` (a dask.distributed address, ``tcp://host:8786``)
sends each task to the cluster's workers; else ``workers > 1`` uses a pool of spawned local
processes; else the tasks run here. ``func`` must be importable by the workers (module level) and
each task must carry its own seed, so results do not depend on where or in which order it ran.
"""
from __future__ import annotations

from multiprocessing import get_context

# How long a scheduler that does not answer is tried before the study fails (s): a cluster's
# scheduler that is starting up answers within seconds.
CONNECT_TIMEOUT_S = 30.0


def map_tasks(func, args, workers: int = 1, scheduler: str | None = None) -> list:
    """``[func(a) for a in args]``, on a Dask scheduler when given, else on ``workers`` spawned processes; results in the order of ``args``."""
    args = list(args)
    if scheduler:
        from distributed import Client    # optional: dask's distributed (~0.4 s), for a cluster only
        with Client(scheduler, timeout=CONNECT_TIMEOUT_S) as client:
            futures = client.map(func, args, pure=False)
            return client.gather(futures)
    if workers > 1:
        with get_context("spawn").Pool(workers) as pool:
            return pool.map(func, args, chunksize=1)
    return [func(a) for a in args]
