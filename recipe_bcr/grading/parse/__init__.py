"""Completion text -> per-problem answer strings (no judgement of the answers)."""
