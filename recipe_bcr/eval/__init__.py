"""Task-scaling evaluation: accuracy and tokens per problem at N = 1..5 (paper, Tables 1, 2, 6).

tasks (what to ask) -> engines (how to generate) -> scoring (per-sample records) ->
summary (streamed aggregates, tables, plots). Run it with `python -m recipe_bcr.eval`.
"""
