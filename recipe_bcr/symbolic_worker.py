"""Symbolic equivalence worker: one process, JSON lines in on stdin, out on a private pipe.

Runs math-verify's parser (latex2sympy2_extended) and grader in its own main thread, so
their signal-based soft timeouts work here; the parent kills the whole process when its
hard deadline passes (see recipe_bcr.symbolic). Extra rules on top of math-verify, each
closing a false-credit case seen in public grader suites:
  * a parse that stopped early (unbalanced braces in what was read) counts as unparsed;
  * a numeric equality whose left side holds no unknown ("4 = 5") is not an answer;
  * two plain numbers must agree exactly (or to 1e-6 relative if one is a decimal),
    never by rounding to six places, so 1/2004! is not 1/2006!; two numbers that differ are
    rejected before math-verify's (slower) symbolic search;
  * a number never equals an expression in unknowns other than an assignment ("x = 5")
    (12 vs 8n^2+4n+1, 8 vs y = -2x), nor an interval, union, list, tuple or matrix of
    other than one element; both are decided before math-verify's (slower) search.
"""

from __future__ import annotations

import json
import os
import sys
from functools import lru_cache
from importlib import resources
from typing import Any

Status = str  # "true" | "false" | "gold_unparsed" | "pred_unparsed" | "error"


def _balanced(s: str) -> bool:
    depth = 0
    for c in s.replace("\\{", "").replace("\\}", ""):
        depth += (c == "{") - (c == "}")
        if depth < 0:
            return False
    return depth == 0


class Checker:
    def __init__(self, rel_tol: float) -> None:
        import sympy
        from math_verify import ExprExtractionConfig, LatexExtractionConfig, parse, verify

        from recipe_bcr import latex_two_stage

        if not latex_two_stage.enable():
            print("latex2sympy2_extended layout unknown: parsing in LL mode only (slower)", file=sys.stderr)
        self.sympy = sympy
        self._parse = parse
        self._verify = verify
        self._config = [LatexExtractionConfig(boxed_match_priority=0), ExprExtractionConfig()]
        self.rel_tol = rel_tol
        self.parse_gold = lru_cache(maxsize=4096)(self.parse_text)

    def parse_text(self, text: str, timeout: int = 5) -> list[Any] | None:
        parsed = self._parse(f"${text}$", extraction_config=self._config, parsing_timeout=timeout)
        if len(parsed) < 2 or not isinstance(parsed[1], str) or not _balanced(parsed[1]):
            return None
        if isinstance(parsed[0], str):
            return None
        return parsed

    def _is_number(self, e: Any) -> bool:
        return isinstance(e, self.sympy.Expr) and e.is_number and not e.free_symbols

    def _never_a_number(self, e: Any) -> bool:
        """True for answers that can never equal a single number: anything in unknowns other
        than a value assigned to something ("x = 5", "f(x) = 5") (12 vs 8n^2+4n+1, 8 vs y = -2x, 3 vs x > 2) and any interval,
        union, list, tuple or matrix of other than one element."""
        S = self.sympy
        if isinstance(e, S.Eq) and not getattr(e.rhs, "free_symbols", True):
            return False  # math-verify reads "f(x) = 1", "|AB| = 1" as the value 1
        if getattr(e, "free_symbols", None):
            return True
        if isinstance(e, (S.Interval, S.Union)):
            return True
        if isinstance(e, (S.FiniteSet, S.Tuple, tuple, list)):
            return len(e) != 1
        if isinstance(e, S.MatrixBase):
            return e.rows * e.cols != 1
        return False

    def _numbers_agree(self, g: Any, p: Any) -> bool:
        S = self.sympy
        if isinstance(g, S.Rational) and isinstance(p, S.Rational):
            return bool(g == p)
        gv, pv = S.N(g, 60), S.N(p, 60)
        if not (gv.is_real and pv.is_real):
            return bool(abs(gv - pv) <= S.Float("1e-40", 60) * max(abs(gv), abs(pv), 1))
        scale = max(abs(gv), abs(pv))
        if scale == 0:
            return True
        approx = bool(g.atoms(S.Float) or p.atoms(S.Float))
        tol = self.rel_tol if approx else 1e-30
        return bool(abs(gv - pv) <= tol * scale)

    def _number(self, value: list[Any]) -> list[Any]:
        """A plain number read by the parent, as the parser would have returned it."""
        num, den, approximate = value
        S = self.sympy
        q = S.Rational(int(num), int(den))
        return [S.Float(q, 30) if approximate else q, str(q)]

    def check(
        self, gold: str, pred: str, timeout: int, gold_number: list[Any] | None = None, pred_number: list[Any] | None = None
    ) -> Status:
        # a side the parent already read as a plain number skips the (slow) LaTeX parse
        G = self._number(gold_number) if gold_number else self.parse_gold(gold, timeout)
        if G is None:
            return "gold_unparsed"
        P = self._number(pred_number) if pred_number else self.parse_text(pred, timeout)
        if P is None:
            return "pred_unparsed"
        g, p = G[0], P[0]
        S = self.sympy
        if isinstance(p, S.Eq) and not getattr(p.lhs, "free_symbols", True) and not isinstance(g, S.Rel):
            return "false"
        if self._is_number(g) and self._is_number(p) and not self._numbers_agree(g, p):
            return "false"  # two different numbers: no need for math-verify's symbolic search
        if (self._is_number(g) and self._never_a_number(p)) or (self._is_number(p) and self._never_a_number(g)):
            return "false"
        ok = self._verify(G, P, timeout_seconds=timeout)
        if ok and self._is_number(g) and self._is_number(p):
            ok = self._numbers_agree(g, p)
        return "true" if ok else "false"


# A few pairs through the whole check (parse and math-verify's grader) at start-up.
_WARMUP_PAIRS = [
    ("\\frac{\\sqrt{3}}{2}", "\\frac{1}{2}\\sqrt{3}"),
    ("(1, \\frac{\\pi}{2})", "\\left(1, \\frac{\\pi}{2}\\right)"),
    ("\\{1, 2\\}", "2, 1"),
    ("x^2 + 2x + 1", "(x+1)^2"),
    ("y = 2x + 3", "2x - y + 3 = 0"),
    ("\\begin{pmatrix} 1 \\\\ 2 \\end{pmatrix}", "\\begin{pmatrix} 1 \\\\ 3 \\end{pmatrix}"),
]


def warm_up(checker: Checker) -> None:
    """Fill the parser's per-process prediction caches with common answer shapes, so the first
    real checks do not pay ANTLR's cold start (3-10x the warm cost)."""
    shapes = resources.files("recipe_bcr").joinpath("resources/warmup_answers.txt").read_text(encoding="utf-8")
    for line in shapes.splitlines():
        if line.strip() and not line.startswith("#"):
            checker.parse_text(line.strip())
    for gold, pred in _WARMUP_PAIRS:
        checker.check(gold, pred, 5)


def main() -> None:
    out = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # anything the libraries print goes to stderr, never into the protocol
    rel_tol = float(sys.argv[1]) if len(sys.argv) > 1 else 1e-6
    checker = Checker(rel_tol)
    try:
        warm_up(checker)
    except Exception as e:  # noqa: BLE001 - a worker without warm-up is slower, never unusable
        print(f"parser warm-up skipped: {type(e).__name__}: {e}", file=sys.stderr)
    out.write(json.dumps({"ready": True}) + "\n")
    for line in sys.stdin:
        req = json.loads(line)
        try:
            status = checker.check(
                req["gold"], req["pred"], max(1, int(req.get("timeout", 5))), req.get("gold_number"), req.get("pred_number")
            )
        except Exception as e:  # noqa: BLE001 - any library failure is "no credit", reported
            status = "error"
            print(f"symbolic check failed: {type(e).__name__}: {e}", file=sys.stderr)
        out.write(json.dumps({"id": req["id"], "status": status}) + "\n")


if __name__ == "__main__":
    main()
