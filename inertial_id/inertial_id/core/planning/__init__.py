"""Certified safe-excitation planning: Bezier plans, their certifier, the optimizer.

References: Zhang, Zhou, Vasudevan, "Provably-Safe, Online System Identification" (seed 003).
"""
