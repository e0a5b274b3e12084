"""The symbolic equivalence check, run in a pool of sandboxed, time-limited worker processes."""
