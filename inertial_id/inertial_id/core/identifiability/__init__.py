"""Which inertial parameters (and combinations) data can determine."""
