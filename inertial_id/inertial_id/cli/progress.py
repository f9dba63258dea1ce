"""Progress bars for long commands: tqdm on stderr, and only when stderr is a terminal (logs and
pipes stay clean)."""
from __future__ import annotations

import contextlib
import sys

from tqdm import tqdm


class _Silent:
    def update(self, n: int = 1) -> None:
        pass


@contextlib.contextmanager
def progress_bar(total=None, desc: str = "", unit: str = "it", enabled: bool = True):
    """A tqdm bar (``.update(n)``) when ``enabled`` and stderr is a TTY, else a no-op."""
    if not (enabled and sys.stderr.isatty()):
        yield _Silent()
        return
    with tqdm(total=total, desc=desc, unit=unit, file=sys.stderr, leave=False, dynamic_ncols=True) as bar:
        yield bar
