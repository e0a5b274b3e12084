"""Faster ANTLR prediction for latex2sympy2_extended (workers only): SLL first, full LL only on a syntax error,
so every result is LL's; rule `atom_expr` (`x^2`) keeps LL, where SLL would always fail."""

from __future__ import annotations

from typing import Any

FULL_CONTEXT_RULES = ("atom_expr",)
_ORIGINAL_ATTR = "_bcr_ll_create_parser"


def enable() -> bool:
    """Switch latex2sympy2_extended to two-stage parsing; False if its layout is not the known one."""
    try:
        from antlr4.atn.ParserATNSimulator import ParserATNSimulator
        from antlr4.atn.PredictionMode import PredictionMode
        from latex2sympy2_extended.antlr_parser import PSParser
        from latex2sympy2_extended.latex2sympy2 import _Latex2Sympy
    except ImportError:
        return False
    if hasattr(_Latex2Sympy, _ORIGINAL_ATTR):
        return True
    create_ll = getattr(_Latex2Sympy, "create_parser", None)
    rule_names = list(getattr(PSParser, "ruleNames", []))
    if create_ll is None or not all(rule in rule_names for rule in FULL_CONTEXT_RULES):
        return False
    rules = {rule_names.index(rule) for rule in FULL_CONTEXT_RULES}
    full_context = frozenset(d for d, state in enumerate(PSParser.atn.decisionToState) if state.ruleIndex in rules)

    class FirstStageSimulator(ParserATNSimulator):
        def adaptivePredict(self, input: Any, decision: int, outerContext: Any) -> int:
            self.predictionMode = PredictionMode.LL if decision in full_context else PredictionMode.SLL
            return super().adaptivePredict(input, decision, outerContext)

    def create_parser(self: Any, latex_str: str) -> Any:
        parser = create_ll(self, latex_str)
        parser._interp = FirstStageSimulator(parser, parser.atn, parser.decisionsToDFA, parser.sharedContextCache)
        parse_first = parser.math

        def math() -> Any:
            try:
                return parse_first()
            except Exception:  # a syntax error in the first stage: LL decides (timeouts are BaseException)
                return create_ll(self, latex_str).math()

        parser.math = math
        return parser

    setattr(_Latex2Sympy, _ORIGINAL_ATTR, create_ll)
    _Latex2Sympy.create_parser = create_parser
    return True


def disable() -> None:
    """Restore the library's own LL-only parser (tests compare the two)."""
    from latex2sympy2_extended.latex2sympy2 import _Latex2Sympy

    create_ll = getattr(_Latex2Sympy, _ORIGINAL_ATTR, None)
    if create_ll is not None:
        _Latex2Sympy.create_parser = create_ll
        delattr(_Latex2Sympy, _ORIGINAL_ATTR)
