"""bcr-recipe: Batched Contextual Reinforcement for verl.

The core modules (prompt, boxed, extract, normalize, verify, reward) are pure Python and
import neither verl nor torch, so training and evaluation score completions identically.
"""

__version__ = "0.1.0"
