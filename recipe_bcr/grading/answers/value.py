"""Values of answer trees, bounded: exact (Fractions) where rational, else 50 digits that can only refute."""

from __future__ import annotations

import math
import operator
import threading
import zlib
from fractions import Fraction
from typing import Any

import mpmath

from recipe_bcr.grading.answers.node import Fact, Node
from recipe_bcr.grading.answers.normalize import MAX_DIGITS

_CTX = mpmath.MPContext()  # private: never changes the precision another thread's mpmath uses
_CTX.dps = 50
_DIFF_LOCK = threading.Lock()
_MAX_BITS = int(MAX_DIGITS * 3.33)
_MAX_FACTORIAL = 450  # 450! has about 1000 digits
_MAX_EXPONENT = 10_000


def _nth_root(q: Fraction, n: int) -> Fraction | None:
    """The exact real n-th root of q when it is rational (odd roots of negatives are real); else None."""
    if n < 1 or n > 64:
        return None
    if q < 0:
        if n % 2 == 0:
            return None
        r = _nth_root(-q, n)
        return None if r is None else -r
    out = []
    for part in (q.numerator, q.denominator):
        r = round(part ** (1.0 / n)) if part.bit_length() < 1000 else None
        if r is None:
            return None
        hit = next((c for c in (r - 1, r, r + 1) if c >= 0 and c**n == part), None)
        if hit is None:
            return None
        out.append(hit)
    return Fraction(out[0], out[1])


def _power(base: Fraction, exp: Fraction) -> Fraction | None:
    if exp.denominator != 1:
        root = _nth_root(base, exp.denominator)
        return None if root is None else _power(root, Fraction(exp.numerator))
    e = int(exp)
    if abs(e) > _MAX_EXPONENT or max(base.numerator.bit_length(), base.denominator.bit_length()) * abs(e) > _MAX_BITS:
        return None
    if base == 0 and e < 0:
        return None
    return base**e


def _double_factorial(n: int) -> int:
    return math.prod(range(n, 0, -2)) if n > 0 else 1


_UNARY = {"neg": operator.neg, "abs": abs, "floor": math.floor, "ceil": math.ceil}
_EXACT_FUNCS = {"max": max, "min": min, "gcd": lambda a: math.gcd(*a), "lcm": lambda a: math.lcm(*a)}


def annotate(*trees: Node) -> None:
    """Every node's exact value and unknowns, computed once after reading: the rules then read them from the nodes."""
    for tree in trees:
        for node in tree.walk():
            exact(node)
            unknowns(node)


def _exact(node: Node) -> Fraction | None:
    """The exact rational value of a tree, or None (an irrational, an unknown, a guard)."""
    k, ch = node.kind, node.children
    try:
        if k == "num":
            return node.value
        if k in ("degree", "unit", "words"):
            return exact(ch[0])
        if k in _UNARY:
            v = exact(ch[0])
            return None if v is None else Fraction(_UNARY[k](v))
        if k == "add":
            total = Fraction(0)
            for c in ch:
                v = exact(c)
                if v is None:
                    return None
                total += v
                if total.denominator.bit_length() > _MAX_BITS:  # 1/2 + 1/3 + 1/5 + ...: no exact sum here
                    return None
            return total
        if k == "mul":
            out = Fraction(1)
            for c in ch:
                v = exact(c)
                if v is None:
                    return None
                out *= v
                if max(out.numerator.bit_length(), out.denominator.bit_length()) > _MAX_BITS:
                    return None
            return out
        if k == "div":
            a, b = exact(ch[0]), exact(ch[1])
            return None if a is None or b is None or b == 0 else a / b
        if k == "pow":
            a, b = exact(ch[0]), exact(ch[1])
            return None if a is None or b is None else _power(a, b)
        if k == "root":
            a = exact(ch[0])
            n = exact(ch[1]) if len(ch) > 1 else Fraction(2)
            if a is None or n is None or n.denominator != 1:
                return None
            return _nth_root(a, int(n))
        if k == "fact":
            a = exact(ch[0])
            if a is None or a.denominator != 1 or not 0 <= a <= _MAX_FACTORIAL:
                return None
            return Fraction(math.factorial(int(a)) if node.text == "!" else _double_factorial(int(a)))
        if k == "binom":
            a, b = exact(ch[0]), exact(ch[1])
            if a is None or b is None or a.denominator != 1 or b.denominator != 1 or not 0 <= a <= 3000:
                return None
            return Fraction(math.comb(int(a), int(b))) if b >= 0 else Fraction(0)
        if k == "func" and node.text in _EXACT_FUNCS:
            args = [exact(c) for c in ch]
            if any(a is None for a in args) or (node.text in ("gcd", "lcm") and any(a.denominator != 1 for a in args)):  # type: ignore[union-attr]
                return None
            return Fraction(_EXACT_FUNCS[node.text]([a if node.text in ("max", "min") else int(a) for a in args]))  # type: ignore[arg-type]
    except (OverflowError, ZeroDivisionError, ValueError):
        return None
    return None


REFUTE_REL = _CTX.mpf(10) ** -30  # a relative difference this large is no rounding noise at 50 digits


def refutes(a: tuple[Any, Any], b: tuple[Any, Any]) -> bool:
    """Two values certainly differ: far above the rounding noise of the largest magnitude met."""
    noise = max(a[1], b[1], abs(a[0]), abs(b[0]))
    if noise == 0:
        return False
    return abs(a[0] - b[0]) > REFUTE_REL * noise


def refute(pred: Node, gold: Node) -> bool | None:
    """False when two trees' 50-digit values (or a huge tower against a small number) certainly differ."""
    im = (unknowns(pred) | unknowns(gold)) <= {"i", "e"}
    a, b = approximate(pred, im), approximate(gold, im)
    if a is None or b is None:
        return False if _beyond(pred, b) or _beyond(gold, a) else None
    return False if refutes(a, b) else None


def _beyond(tower: Node, other: tuple[Any, Any] | None) -> bool:
    floor = tower_floor(tower)
    return other is not None and floor is not None and floor > 1000 and abs(other[0]) < _CTX.mpf(10) ** 900


def as_mp(q: Fraction) -> Any:
    """An exact rational as a 50-digit number of this module's own context."""
    return _CTX.mpf(q.numerator) / q.denominator


def real_and_imaginary(x: Any) -> tuple[Any, Any]:
    return _CTX.re(x), _CTX.im(x)


def scaled_fraction(x: Any, places: int) -> Fraction:
    """x times 10^places, to 45 significant digits, as an exact Fraction (where a decimal's last digit falls)."""
    return Fraction(_CTX.nstr(x * _CTX.mpf(10) ** places, 45, strip_zeros=False, min_fixed=-100, max_fixed=100))


def _names(node: Node) -> frozenset[str]:
    if node.kind == "sym":
        return frozenset((node.text,))
    if node.kind == "bigop" and len(node.children) > 1 and node.children[1].kind == "rel":
        body, (index, start), *upper = node.children[0], node.children[1].children, *node.children[2:]
        return (unknowns(body) - unknowns(index)).union(
            unknowns(start), *(unknowns(u) for u in upper)
        )  # the index is bound
    return frozenset().union(*(unknowns(c) for c in node.children))


def _point(name: str) -> Any:
    """The fixed value an unknown takes: irrational-looking, different for every name."""
    h = zlib.crc32(name.encode())
    return _CTX.mpf(h % 99991 + 7) / 9973 + _CTX.sqrt(2) / (h % 97 + 3)


_FUNCS = {name: getattr(_CTX, name) for name in "sin cos tan cot sec csc sinh cosh tanh ln exp".split()}
_FUNCS |= {"arc" + name: getattr(_CTX, "a" + name) for name in "sin cos tan cot sec csc".split()}
_FUNCS |= {"ar" + name: getattr(_CTX, "a" + name) for name in "sinh cosh tanh".split()}
_FUNCS |= {"log": _CTX.ln, "lg": lambda x: _CTX.log(x, 10)}


_TRIG = frozenset("sin cos tan cot sec csc".split())


class _Guard(Exception): ...


def _numeric(node: Node, imaginary: bool = False) -> tuple[Any, Any] | None:
    """A 50-digit value (unknowns at fixed points) and the largest magnitude met, or None."""
    mags: list[Any] = [_CTX.mpf(0)]
    try:
        return _num(node, imaginary, mags, {}), mags[0]
    except (_Guard, ZeroDivisionError, ValueError, OverflowError, TypeError, ArithmeticError):
        return None


def _num(node: Node, im: bool, mags: list[Any], env: dict[str, Any]) -> Any:
    value = _eval(node, im, mags, env)
    size = abs(value)
    if size > mags[0]:
        mags[0] = size
    return value


def _eval(node: Node, im: bool, mags: list[Any], env: dict[str, Any]) -> Any:  # noqa: C901 - one case per node kind
    k, ch = node.kind, node.children
    if k == "prime":
        return _derivative(ch[0], im, mags, env)
    if k == "num":
        return _CTX.mpf(node.value.numerator) / node.value.denominator  # type: ignore[union-attr]
    if k in ("degree", "unit", "words"):
        return _num(ch[0], im, mags, env)
    if k == "sym":
        if node.text == "e":
            return _CTX.e
        if node.text == "i" and im:
            return _CTX.mpc(0, 1)
        return env[node.text] if node.text in env else _point(node.text)
    if k == "const":
        if node.text == "pi":
            return _CTX.pi
        raise _Guard  # infinities compare by identity, elsewhere
    if k == "neg":
        return -_num(ch[0], im, mags, env)
    if k == "add":
        return _CTX.fsum(_num(c, im, mags, env) for c in ch)
    if k == "mul":
        out = _CTX.mpf(1)
        for c in ch:
            out *= _num(c, im, mags, env)
        return out
    if k == "div":
        return _num(ch[0], im, mags, env) / _num(ch[1], im, mags, env)
    if k == "pow":
        base, exp = _num(ch[0], im, mags, env), _num(ch[1], im, mags, env)
        if abs(exp) > _MAX_EXPONENT or (base != 0 and abs(exp * _CTX.log(abs(base))) > 1e6):
            raise _Guard
        if base == 0 and _CTX.re(exp) <= 0:
            raise _Guard
        return _real_power(base, exp, ch[1])
    if k == "root":
        n = exact(ch[1]) if len(ch) > 1 else Fraction(2)
        if n is None or n.denominator != 1 or not 1 <= n <= 64:
            raise _Guard
        x = _num(ch[0], im, mags, env)
        if _CTX.im(x) == 0 and x < 0 and int(n) % 2 == 1:
            return -_CTX.root(-x, int(n))  # the real odd root of a negative number
        return _CTX.root(x, int(n)) if x >= 0 or _CTX.im(x) != 0 else _CTX.sqrt(x) if n == 2 else _raise()
    if k == "fact":
        x = _num(ch[0], im, mags, env)
        if _CTX.im(x) != 0 or x < 0 or x > 10_000 or x != _CTX.floor(x):
            raise _Guard
        if node.text == "!!":
            return _CTX.mpf(_double_factorial(int(x))) if x <= 3000 else _raise()
        return _CTX.factorial(x)
    if k == "binom":
        a, b = _num(ch[0], im, mags, env), _num(ch[1], im, mags, env)
        if abs(a) > 10_000:
            raise _Guard
        return _CTX.binomial(a, b)
    if k == "abs":
        return abs(_num(ch[0], im, mags, env))
    if k in ("floor", "ceil"):
        x = _num(ch[0], im, mags, env)
        return _CTX.floor(x) if k == "floor" else _CTX.ceil(x)
    if k == "func":
        if node.text == "log_base":
            x, b = _num(ch[0], im, mags, env), _num(ch[1], im, mags, env)
            return _CTX.log(x) / _CTX.log(b)
        fn = _FUNCS.get(node.text)
        if fn is None or len(ch) != 1:
            raise _Guard
        x = _num(ch[0], im, mags, env)
        if ch[0].kind == "degree" and node.text in _TRIG:
            x = x * _CTX.pi / 180  # \sin 60^\circ: the degrees are the argument's unit
        if abs(x) > 1e6:
            raise _Guard
        return fn(x)
    raise _Guard


def _derivative(node: Node, im: bool, mags: list[Any], env: dict[str, Any]) -> Any:
    """(f)' in its one unknown, at that unknown's fixed point; its noise is taken as 10^10 times larger."""
    names = unknowns(node) - {"e", "i"} - set(env)
    if len(names) != 1:
        raise _Guard
    (name,) = names
    with _DIFF_LOCK:  # diff raises the shared context's precision and restores it: one at a time
        value = _CTX.diff(lambda t: _num(node, im, mags, {**env, name: t}), _point(name))
    mags[0] = max(mags[0], abs(value) * _CTX.mpf(10) ** 10)
    return value


def _real_power(base: Any, exp: Any, exp_node: Node) -> Any:
    """base^exp; a negative base with an exponent 1/odd (or p/odd) is the real root, as written."""
    q = exact(exp_node)
    if q is not None and q.denominator % 2 == 1 and q.denominator > 1 and _CTX.im(base) == 0 and base < 0:
        r = -_CTX.root(-base, q.denominator)
        return r**q.numerator
    return _CTX.power(base, exp)


def _raise() -> Any:
    raise _Guard


_TOWER = frozenset(("num", "pow", "mul", "fact"))


def _tower(node: Node) -> float | None:
    """A lower bound of log10 of a power tower of positive numbers; None for anything else."""
    if any(n.kind not in _TOWER for n in node.walk()):
        return None
    try:
        return _log_floor(node)
    except (OverflowError, ValueError, ZeroDivisionError):
        return None


def _log_floor(node: Node) -> float | None:
    k, ch = node.kind, node.children
    if k == "num":
        v = node.value
        return None if v is None or v <= 0 else math.log10(v.numerator) - math.log10(v.denominator)
    if k == "mul":
        parts = [_log_floor(c) for c in ch]
        return None if any(p is None for p in parts) else sum(parts)  # type: ignore[arg-type]
    if k == "pow":
        base, exp = exact(ch[0]), _log_floor(ch[1])
        if base is None or base <= 1 or exp is None:
            return None
        return math.inf if exp > 300 else 10**exp * math.log10(base)
    if k == "fact":
        n = _log_floor(ch[0])
        if n is None or n < 1:
            return None
        whole = math.inf if n > 300 else 10**n * (n - 0.4343)  # log10(N!) >= N (log10 N - log10 e)
        return whole / 2 if node.text == "!!" else whole  # N!!^2 >= N! (N! = N!! (N-1)!!)
    return None


# each kept on the node (node.Fact): a read after the first is a lookup
exact = Fact("exact", _exact)  # the exact rational value, or None (an irrational, an unknown, a size guard)
unknowns = Fact("names", _names)  # the names written (`e`, `i` included; a sum's index is bound, not written)
approximate = Fact("approx", _numeric)  # (node, imaginary): a 50-digit value and the largest magnitude met, or None
tower_floor = Fact("tower", _tower)  # a lower bound of log10 of a power tower, or None
