"""The CPU miniature of the paper: a toy task and tiny model, the demo, the GPU check and the paper
commands. It sits above the recipe and nothing in the recipe imports it."""
