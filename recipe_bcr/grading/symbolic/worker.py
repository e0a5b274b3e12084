"""Symbolic equivalence worker (math-verify on the trees' rendering), a fork of the pool's server, JSON lines over a
socket; its deadline is the parent's kill. On top of math-verify: the whole text or nothing, exact equality only
when proved, the decimal rule wherever numbers compare, a number never an expression in unknowns or a container."""

from __future__ import annotations

import array
import contextlib
import ctypes
import gc
import json
import os
import resource
import signal
import socket
import sys
from fractions import Fraction
from functools import lru_cache
from importlib import resources
from typing import Any

from recipe_bcr.grading.answers.gate import render
from recipe_bcr.grading.answers.scalars import decimal_matches, rounding_candidates, rounds_to, terminates
from recipe_bcr.grading.answers.tree import parse

Status = str  # "true" | "false" | "gold_unparsed" | "pred_unparsed" | "error"
MEMORY_LIMIT = 4 << 30  # bytes of address space per worker
CPU_LIMIT_S = 3600  # a worker is retired (and replaced by the pool) after an hour of CPU
EXACT_DIGITS = 60  # the working precision at which a difference is evaluated before SymPy's `equals`
_FLOAT_NOISE = 1e-12  # a float written for a value with a finite decimal expansion may differ by this much


class Checker:
    def __init__(self, rel_tol: float) -> None:
        import sympy
        from math_verify import LatexExtractionConfig, grader, parse, verify

        from recipe_bcr.grading.symbolic import latex_two_stage

        if not latex_two_stage.enable():
            print("latex2sympy2_extended layout unknown: parsing in LL mode only (slower)", file=sys.stderr)
        self.sympy = sympy
        self._parse = parse
        self._verify = verify
        self._config = [LatexExtractionConfig(boxed_match_priority=0)]
        self.rel_tol = rel_tol
        from sympy.core.evalf import PrecisionExhausted

        self._exhausted = PrecisionExhausted
        self.parse_gold = lru_cache(maxsize=4096)(self.parse_text)
        grader.sympy_numeric_eq = self._numeric_eq  # math-verify's comparisons use our number rules

    def parse_text(self, text: str) -> list[Any] | None:
        """The whole text (a tree's rendering) read as one LaTeX expression, or None (no fallback to a fragment)."""
        parsed = self._parse(
            f"${text}$", extraction_config=self._config, parsing_timeout=None, fallback_mode="no_fallback"
        )
        if len(parsed) != 1 or isinstance(parsed[0], str):
            return None
        return [parsed[0], text]

    def _is_number(self, e: Any) -> bool:
        return isinstance(e, self.sympy.Expr) and bool(e.is_number) and not e.free_symbols

    def _never_a_number(self, e: Any) -> bool:
        """Answers that never equal one number: an expression in unknowns (not an assignment), a container."""
        S = self.sympy
        if isinstance(e, S.Eq) and not getattr(e.rhs, "free_symbols", True):
            return False  # math-verify reads "f(x) = 1", "|AB| = 1" as the value 1
        if getattr(e, "free_symbols", None):
            return not self._constant(e)  # \\sin^2 x + \\cos^2 x is the number 1 (math-verify's simplification decides)
        if isinstance(e, (S.Interval, S.Union)):
            return True
        if isinstance(e, (S.FiniteSet, S.Tuple, tuple, list)):
            return len(e) != 1
        if isinstance(e, S.MatrixBase):
            return e.rows * e.cols != 1
        return False

    def _constant(self, e: Any) -> bool:
        """An expression in unknowns with one value at two unrelated points (an identity such as `\\sec^2 x - \\tan^2 x`)."""
        S = self.sympy
        if not isinstance(e, S.Expr):
            return False
        try:
            values = []
            for point in ((S.Rational(7, 13), S.Rational(5, 11)), (S.Rational(19, 17), S.Rational(3, 23))):
                subs = {s: point[k % 2] + k for k, s in enumerate(sorted(e.free_symbols, key=str))}
                values.append(S.N(e.subs(subs), 30))
            a, b = values
            return bool(a.is_number and b.is_number and abs(a - b) <= S.Float(10) ** -20 * max(1, abs(a)))
        except Exception:  # noqa: BLE001 - not evaluable at a point: not a constant here
            return False

    def _numbers_agree(self, g: Any, p: Any) -> bool:
        """Exact for exact values; a float within float noise of a finite decimal, else within rel_tol."""
        S = self.sympy
        g, p = g.doit(), p.doit()
        if isinstance(g, S.Rational) and isinstance(p, S.Rational):
            return bool(g == p)
        if g.has(S.oo, -S.oo, S.zoo, S.nan) or p.has(S.oo, -S.oo, S.zoo, S.nan):
            return bool(g == p)
        gv, pv = S.N(g, 60), S.N(p, 60)
        scale = max(abs(gv), abs(pv))  # complex values compare by the modulus of their difference
        if scale == 0:
            return True
        g_float, p_float = bool(g.atoms(S.Float)), bool(p.atoms(S.Float))
        if not (g_float or p_float):
            return self._exactly_equal(g, p)
        exact = p if g_float and not p_float else g if p_float and not g_float else None
        finite = isinstance(exact, S.Rational) and terminates(Fraction(int(exact.p), int(exact.q)))
        tol = _FLOAT_NOISE if finite else self.rel_tol
        return bool(abs(gv - pv) <= tol * scale)

    def _exactly_equal(self, g: Any, p: Any) -> bool:
        """Equal only when proved (zero, or `equals`); a nonzero certified evaluation refutes; undecided is not equal."""
        diff = g - p
        if diff == 0:
            return True
        known = diff.is_zero
        if known is not None:
            return bool(known)
        with contextlib.suppress(self._exhausted):
            if diff.evalf(15, maxn=EXACT_DIGITS, strict=True) != 0:
                return False
        proved = diff.equals(0)  # cheap for honest equalities that evaluation alone cannot settle
        if proved is not None:
            return bool(proved)
        return False  # neither proved nor refuted: no credit

    def _numeric_eq(self, a: Any, b: Any, float_rounding: int, numeric_precision: int) -> bool:
        """Replacement for math_verify.grader.sympy_numeric_eq (same arguments, our number rules)."""
        S = self.sympy
        if isinstance(a, S.MatrixBase) and isinstance(b, S.MatrixBase):
            return a.shape == b.shape and all(self._numeric_eq(x, y, 0, 0) for x, y in zip(a, b))
        if self._is_number(a) and self._is_number(b):
            return self._numbers_agree(a, b)
        try:
            diff = a - b
            if diff.has(S.Sum, S.Product):  # to a symbolic bound: its closed form, where SymPy knows one
                diff = S.simplify(diff.doit())
            return bool(diff.evalf(n=numeric_precision) == 0)  # no chop: tiny terms are not zero
        except Exception:  # noqa: BLE001 - not comparable this way; math-verify tries symbolic equality next
            return False

    def _decimal_agrees(self, exact: Any, number: list[Any], rounding_only: bool = False) -> bool:
        """A decimal the parent read exactly against an exact value (`rounding_only`: after \\approx)."""
        S = self.sympy
        q = Fraction(int(number[0]), int(number[1]))
        places = int(number[3])
        exact = exact.doit()  # 1 + 10^{-12} may come unevaluated
        if exact.has(S.oo, -S.oo, S.zoo, S.nan):
            return False
        if isinstance(exact, S.Rational):
            value = Fraction(int(exact.p), int(exact.q))
            return rounds_to(value, q, places) if rounding_only else decimal_matches(value, q, places, self.rel_tol)
        approx = S.N(exact, max(60, places + 30))
        if not approx.is_real:
            return False
        # no finite decimal expansion: the decimal must be its cut or rounding (60 digits decide which)
        scaled = Fraction(str(S.N(approx * S.Integer(10) ** places, max(60, places + 30))))
        written = q * Fraction(10) ** places
        if written.denominator != 1 or written.numerator not in rounding_candidates(scaled):
            return False
        return rounding_only or bool(abs(approx - S.Rational(q.numerator, q.denominator)) <= self.rel_tol * abs(approx))

    def _number(self, value: list[Any]) -> list[Any]:
        """A plain number read by the parent, as the parser would have returned it (exact)."""
        q = self.sympy.Rational(int(value[0]), int(value[1]))
        return [q, str(q)]

    def _imaginary_unit(self, g: Any, p: Any) -> tuple[Any, Any]:
        """`i` is the imaginary unit when it is the only unknown on either side."""
        S = self.sympy
        names = {s.name for e in (g, p) for s in getattr(e, "free_symbols", ())}
        if names != {"i"}:
            return g, p

        def unit(e):
            return e.subs({s: S.I for s in e.free_symbols if s.name == "i"}) if getattr(e, "free_symbols", None) else e

        return unit(g), unit(p)

    def check(
        self,
        gold: str,
        pred: str,
        gold_number: list[Any] | None = None,
        pred_number: list[Any] | None = None,
        pred_rounding: bool = False,
    ) -> Status:
        # a side the parent already read as a plain number skips the (slow) LaTeX parse
        G = self._number(gold_number) if gold_number else self.parse_gold(gold)
        if G is None:
            return "gold_unparsed"
        P = self._number(pred_number) if pred_number else self.parse_text(pred)
        if P is None:
            return "pred_unparsed"
        S = self.sympy
        g, p = G[0], P[0]
        g, p = self._imaginary_unit(g, p)
        if isinstance(p, S.Eq) and not getattr(p.lhs, "free_symbols", True) and not isinstance(g, S.Rel):
            return "false"
        if self._is_number(g) and self._is_number(p):
            if pred_number and pred_number[2]:
                return "true" if self._decimal_agrees(g, pred_number, pred_rounding) else "false"
            if gold_number and gold_number[2]:
                return "true" if self._decimal_agrees(p, gold_number) else "false"
            if not self._numbers_agree(g, p):
                return "false"  # two different numbers: no need for math-verify's symbolic search
        if (self._is_number(g) and self._never_a_number(p)) or (self._is_number(p) and self._never_a_number(g)):
            return "false"
        ok = self._verify([g, G[1]], [p, P[1]], timeout_seconds=None)
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
    """Fill the parser's prediction caches with common answer shapes (ANTLR's cold start is 3-10x)."""
    shapes = resources.files("recipe_bcr").joinpath("resources/warmup_answers.txt").read_text(encoding="utf-8")
    for line in shapes.splitlines():
        if line.strip() and not line.startswith("#"):
            tree = parse(line.strip())  # the checks read the tree's renderings: warm the parser on them
            checker.parse_text(line.strip() if tree is None else render(tree))
    for gold, pred in _WARMUP_PAIRS:
        checker.check(render(parse(gold)), render(parse(pred)))  # type: ignore[arg-type]


def serve(checker: Checker, conn: socket.socket) -> None:
    """Answer checks on `conn` until it closes: one JSON request line, one JSON reply line."""
    reader = conn.makefile("rb")
    for line in reader:
        req_id = None
        try:
            req = json.loads(line)
            req_id = req["id"]
            hints = req.get("gold_number"), req.get("pred_number"), bool(req.get("pred_rounding"))
            status = checker.check(req["gold"], req["pred"], *hints)
        except Exception as e:  # noqa: BLE001 - any library failure is "no credit", reported
            status = "error"
            print(f"symbolic check failed: {type(e).__name__}: {e}", file=sys.stderr)
        conn.sendall((json.dumps({"id": req_id, "status": status}) + "\n").encode())


def _die_with_parent() -> None:
    """The kernel kills this worker when the fork server exits."""
    with contextlib.suppress(OSError, AttributeError):  # not Linux: it still exits when its socket closes
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    if os.getppid() == 1:
        os._exit(0)  # the server died before the request was served


def _worker_main(checker: Checker, conn: socket.socket) -> None:
    """In a fresh fork: say ready with our pid (and a pidfd), then serve until the socket closes."""
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    _die_with_parent()
    for limit, value in ((resource.RLIMIT_AS, MEMORY_LIMIT), (resource.RLIMIT_CPU, CPU_LIMIT_S)):
        with contextlib.suppress(ValueError, OSError):  # a lower limit is already set
            resource.setrlimit(limit, (value, value))
    hello = (json.dumps({"ready": True, "pid": os.getpid()}) + "\n").encode()
    pidfd = os.pidfd_open(os.getpid()) if hasattr(os, "pidfd_open") else None
    if pidfd is None:
        conn.sendall(hello)
    else:
        conn.sendmsg([hello], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [pidfd]))])
        os.close(pidfd)
    serve(checker, conn)


def fork_server(checker: Checker, control: socket.socket) -> None:
    """Fork one worker per socket received on `control`; exit when the pool closes it."""
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the kernel reaps killed workers
    gc.collect()
    gc.freeze()  # the warmed-up objects are never scanned again: a fork shares their pages instead of copying them
    control.sendall(b'{"ready": true}\n')
    while True:
        _, fds, _, _ = socket.recv_fds(control, 16, 1)
        if not fds:
            return  # the pool closed (or its process died)
        conn = socket.socket(fileno=fds[0])
        if os.fork() == 0:
            try:
                control.close()
                _worker_main(checker, conn)
            finally:
                os._exit(0)
        conn.close()


def main() -> None:
    """`python -m recipe_bcr.grading.symbolic.worker [rel_tol] [control-fd]`: the fork server, or stdin checks."""
    os.dup2(2, 1)  # anything the libraries print goes to stderr, never into the protocol
    rel_tol = float(sys.argv[1]) if len(sys.argv) > 1 else 1e-6
    checker = Checker(rel_tol)
    try:
        warm_up(checker)
    except Exception as e:  # noqa: BLE001 - a worker without warm-up is slower, never unusable
        print(f"parser warm-up skipped: {type(e).__name__}: {e}", file=sys.stderr)
    if len(sys.argv) > 2:
        fork_server(checker, socket.socket(fileno=int(sys.argv[2])))
        return
    for line in sys.stdin:
        req = json.loads(line)
        status = checker.check(req["gold"], req["pred"], req.get("gold_number"), req.get("pred_number"))
        print(json.dumps({"id": req.get("id"), "status": status}), file=sys.stderr)


if __name__ == "__main__":
    main()
