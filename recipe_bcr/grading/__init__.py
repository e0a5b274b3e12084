"""The grading core: a completion and its gold answers in, a reward out.

Pure Python (sympy only inside the sandboxed symbolic workers): no verl, no torch, no
pandas, so training (reward_fns.bcr), evaluation and the benchmarks score alike.

    parse/     completion text -> one answer string per problem (boxes, "Answer i:" lines)
    answers/   one answer read exactly: normalisation, shapes, an expression tree, exact values
    symbolic/  the symbolic check, in a pool of sandboxed worker processes
    verify     answer vs gold: the exact reading first, the symbolic pool for the rest
    reward     the BCR reward of a group completion; metrics: its bcr/* training metrics
"""
