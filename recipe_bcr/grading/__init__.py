"""The grading core: a completion and its gold answers in, a reward out (pure Python: sympy only inside the
symbolic workers). parse/: completion -> per-problem answers; answers/: one answer read exactly and compared;
symbolic/: the symbolic check's worker pool; verify: answer vs gold; reward: the BCR reward; metrics: bcr/*."""
