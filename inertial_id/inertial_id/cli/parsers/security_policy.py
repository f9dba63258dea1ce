"""``inertial-id profile security-policy --robot R --out policy.xml``: the SROS2 access-control
policy of the node suite on a robot profile (one enclave per node under /inertial_id/, allowing
exactly the topics and services it uses, and an operator enclave that alone may call ~/start,
~/stop, ~/reset and ~/end_streams). Turn it into a keystore's permissions with ``ros2 security
generate_artifacts`` (docs: Security)."""
from __future__ import annotations


def register(sub) -> None:
    p = sub.add_parser("security-policy", help="write the SROS2 policy of the node suite", description=__doc__)
    p.add_argument("--robot", default="kinova_gen3", help="robot profile (name or YAML path)")
    p.add_argument("--no-sim", action="store_true", help="without the simulated arm (a real robot's driver instead)")
    p.add_argument("--callers", default="operator", help="comma-separated enclaves allowed to call the command services")
    p.add_argument("--out", default="-", help="policy file to write ('-': stdout)")
    p.set_defaults(handler="security_policy.run")
