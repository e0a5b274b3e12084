"""The data-preparation commands (`python -m data_prep.build_groups`, ...), shipped in the wheel; in a checkout
`python data_prep/build_groups.py` runs the same code."""
