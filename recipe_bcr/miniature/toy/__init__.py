"""A toy BCR task and a tiny Qwen3 model warm-started on it, for CPU training runs.

A randomly initialised model earns reward 0 on every sample, so every GRPO advantage is 0
and nothing is learned. The toy task (`task`) is short chains of additions and subtractions
in the paper's group format, where written steps raise accuracy and filler only costs tokens;
the model (`model`) is a small Qwen3 warm-started by a supervised pass on such answers, so that
it answers in the format with imperfect accuracy and rewards differ within a group. `profile`
reads back what a model writes per problem.
"""
