"""Certified safe-excitation planning (seed 003): Bezier plans, their certifier, the optimizer."""
