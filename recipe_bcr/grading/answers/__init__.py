"""One answer read exactly: normalisation, shape, tokens, expression tree, exact value, comparison."""
