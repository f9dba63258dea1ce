"""``inertial-id profile security-policy``: the node suite's SROS2 policy of a profile, written to a
file or stdout (the options: :mod:`.parsers.security_policy`)."""
from __future__ import annotations

import sys
from pathlib import Path

from ..core.data.security_policy import policy_xml
from ..core.robot.model import load_robot
from . import UserError
from .parsers import str_list


def run(args) -> int:
    callers = str_list(args.callers)
    if not callers or not all(c.replace("_", "").isalnum() for c in callers):
        raise UserError("--callers: enclave names of letters, digits and '_'")
    text = policy_xml(load_robot(args.robot), sim=not args.no_sim, callers=callers)
    if args.out == "-":
        sys.stdout.write(text)
    else:
        if Path(args.out).is_dir():
            raise UserError(f"--out '{args.out}' is a folder")
        Path(args.out).write_text(text)
        print(f"wrote {args.out}", file=sys.stderr)
    return 0
