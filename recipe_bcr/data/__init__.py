"""Data preparation: the prompt, sources, cleaning, difficulty, grouping, budget, the
evaluation sets, and the verl parquet schema they are written in."""
