"""verl-facing reward entry points (loaded with `pkg://reward_fns.bcr`)."""
