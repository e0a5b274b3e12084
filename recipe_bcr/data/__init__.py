"""Data preparation: load, clean, rate difficulty, group, and write verl parquet."""
