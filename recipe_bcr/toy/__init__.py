"""A toy BCR task and a tiny Qwen3 model warm-started on it, for CPU training runs.

A randomly initialised model earns reward 0 on every sample, so every GRPO advantage is 0
and nothing is learned. The toy task (`task`) is short arithmetic in the paper's group
format; the model (`model`) is a small Qwen3 warm-started by a supervised pass on noisy,
sometimes verbose answers, so that it answers in the format with imperfect accuracy and
rewards differ within a group.
"""
