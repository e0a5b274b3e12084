"""Hydra configs of the recipe (a package so that installed copies can find them)."""
