"""Issue 36: an answer identical to its gold after whitespace always scores (even where the tree cannot read
either), and piecewise answers (`cases`, `\\left\\{ \\begin{array} ... \\right.`) are read: the same pieces in any
spelling or order are the same function; another value, boundary or inequality in any piece is not."""

from __future__ import annotations

import random

import pytest

RNG_SEED = 360


UNREADABLE = [
    "-1./3",
    "\\text{see figure} \\square",
    "x \\star y",
    "\\mathfrak{g}",
    "a \\wr b",
    "\\aleph_0 + 1",
    "\\left\\{ \\begin{array}{ll} x & x>0 \\\\ -x & x \\le 0 \\end{array} \\right.",
]


def _same_after_whitespace(text: str) -> list[str]:
    """Spellings that differ from `text` only in whitespace TeX does not show: around it, doubled, as line breaks,
    and dropped beside a non-letter (the space that ends a command before a letter is kept)."""
    tight = " ".join(text.split()).replace(" + ", "+").replace(" \\", "\\").replace("{ ", "{").replace(" &", "&")
    return [text, f"  {text}\n", text.replace(" ", "  "), text.replace(" ", "\n"), tight]


@pytest.mark.parametrize("gold", UNREADABLE)
def test_an_answer_identical_to_its_gold_after_whitespace_scores(verifier, gold):
    for pred in _same_after_whitespace(gold):
        assert verifier.check(pred, gold).correct, (pred, gold)
        assert verifier.check(gold, pred).correct, (gold, pred)
    assert not verifier.check(gold + "1", gold).correct
    assert not verifier.check("0", gold).correct


def test_the_space_that_ends_a_command_or_parts_two_words_is_not_dropped(verifier):
    for pred, gold in (
        ("a \\wrb", "a \\wr b"),
        ("x\\stary", "x \\star y"),
        ("\\text{seefigure} \\square", "\\text{see figure} \\square"),
        ("\\aleph_01", "\\aleph_0 1"),
    ):
        assert not verifier.check(pred, gold).correct, (pred, gold)


def _piece_values(rng: random.Random) -> tuple[str, str, int]:
    a, b, c = rng.randrange(1, 9), rng.randrange(-9, 9), rng.randrange(-5, 6)
    return f"{a}x + {b}" if b else f"{a}x", f"x^2 - {abs(c) + 1}", c


def _cases(first: str, second: str, c: int, op1: str = "<", op2: str = "\\ge") -> str:
    return f"\\begin{{cases}} {first} & x {op1} {c} \\\\ {second} & x {op2} {c} \\end{{cases}}"


def _array(first: str, second: str, c: int, op1: str = "<", op2: str = "\\geq") -> str:
    return (
        f"\\left\\{{ \\begin{{array}}{{ll}} {first}, & \\text{{if }} x {op1} {c} \\\\ {second}, & \\text{{if }} x {op2} {c}"
        f" \\end{{array}} \\right."
    )


def test_the_same_pieces_in_any_spelling_are_the_same_function(verifier):
    rng = random.Random(RNG_SEED)
    for _ in range(25):
        first, second, c = _piece_values(rng)
        gold = _cases(first, second, c)
        for pred in (
            gold,
            _array(first, second, c),
            _cases(second, first, c, "\\ge", "<"),
            _cases(first.replace("x", "x ").replace(" +", "+"), second, c, "<", "\\geq"),
            f"\\begin{{cases}} {first} & \\text{{for }} x < {c} \\\\ {second} & \\text{{otherwise}} \\end{{cases}}",
        ):
            assert verifier.check(pred, gold).correct, (pred, gold)
            assert verifier.check(gold, pred).correct, (gold, pred)


def test_another_piece_is_another_function(verifier):
    rng = random.Random(RNG_SEED + 1)
    for _ in range(25):
        first, second, c = _piece_values(rng)
        gold = _cases(first, second, c)
        for pred in (
            _cases(first + " + 1", second, c),
            _cases(first, second, c + 1),
            _cases(first, second, c, "\\le", ">"),
            _cases(second, first, c),
            _array(first, second + "+1", c),
            first,
            f"\\begin{{cases}} {first} & x < {c} \\end{{cases}}",
            f"\\begin{{cases}} {first} & x < {c} \\\\ {second} & x \\ge {c} \\\\ 0 & x = {c} \\end{{cases}}",
        ):
            assert not verifier.check(pred, gold).correct, (pred, gold)


def test_a_piecewise_answer_is_read_against_a_readable_gold(verifier):
    assert not verifier.check("\\begin{cases} 1 & x < 0 \\\\ 2 & x \\ge 0 \\end{cases}", "1").correct
    assert not verifier.check("1", "\\begin{cases} 1 & x < 0 \\\\ 2 & x \\ge 0 \\end{cases}").correct
