"""bcr-recipe: Batched Contextual Reinforcement for verl.

Layers, each importing only those before it (tests/test_layers.py):
grading -> data -> engines -> eval -> toy -> verl_ext -> commands.
"""

__version__ = "0.1.0"
