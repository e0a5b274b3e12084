import json
import time
from fractions import Fraction

import pytest

from recipe_bcr.grading.answers.scalars import Number, numbers_match


def _cases(shared):
    path = shared / "data" / "grader_cases" / "public_equivalence_cases.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


# public cases whose source's verdict the rules of issue 17 reverse on purpose
OVERRULED = {
    "eq-0115": "multiplicity is kept: a solution listed twice is not the gold's list",
    "eq-0208": "an answer with words the gold does not carry ('17 any text') is wrong",
}


@pytest.fixture(scope="module")
def patient_verifier():
    """The verdicts under test are the grader's, not the deadline's: with the default 2 s, a machine
    loaded by other jobs turns the slowest honest symbolic checks into timeouts (see test_concurrency
    and test_pool_recovery for the deadlines themselves)."""
    from recipe_bcr.grading.verify import Verifier

    verifier = Verifier(timeout_s=30.0)
    yield verifier
    verifier.close()


def test_public_grader_cases(shared, patient_verifier):
    """Every unambiguous public case is judged as its source says (but the OVERRULED ones, which are
    judged wrong); no case ever gets false credit."""
    verifier = patient_verifier
    wrong, false_credit = [], []
    for case in _cases(shared):
        got = verifier.check(case["pred"], case["gold"]).correct
        if case["id"] in OVERRULED:
            assert not got, case["id"]
            continue
        if got and not case["equivalent"]:
            false_credit.append(case["id"])
        if not case["ambiguous"] and got != case["equivalent"]:
            wrong.append((case["id"], case["gold"], case["pred"], got))
    assert false_credit == []
    assert wrong == []


@pytest.mark.parametrize(
    "gold,pred",
    [
        ("1331 and 1728", "1728"),
        ("1331, 1728", "1728"),
        ("\\pm 2021", "2021"),
        ("\\frac{1}{2004!}", "\\frac{1}{2006!}"),
        ("1/3", "0.333"),
        ("\\frac{1}{3}", "0.33"),
        ("5", "4=5"),
        ("5", "5, 6"),
        ("5", "5 \\text{ or } 6"),
        ("A", "A, B, C, D"),
        ("\\frac{1}{2^{99}}", "\\frac{1}{2^{98}}"),
        ("0", "0.0000001"),
        ("1", "\\frac{1}{0}"),
        ("2", "x"),
        ("5", "5x"),
        ("1, 2, \\ldots, n", "1, 3, 5, \\ldots, 2n-1"),
        ("1 - \\frac{1}{\\mathrm{e}}", "1 + \\frac{1}{\\mathrm{e}}"),
        ("32349", "32, 349"),
        ("56", "5 6"),
        ("12", "\\text{12 or 13}"),
        ("\\sqrt{2}", "1.414"),
        ("25\\%", "0.26"),
        ("0.25", "2.5\\%"),
        ("\\frac{1}{3}", "0.\\overline{33}4"),
        ("\\frac{1}{6}", "0.\\overline{16}"),
    ],
)
def test_no_credit_for_overlap_or_approximation(verifier, gold, pred):
    assert not verifier.check(pred, gold).correct


@pytest.mark.parametrize(
    "gold,pred,method",
    [
        ("27", "27.0", "numeric"),
        ("\\frac{1}{2}", "0.5", "numeric"),
        ("1/12", "0.0833333333333333", "numeric"),
        ("7425000", "7,425,000", "numeric"),
        (
            "\\dfrac{3}{4}",
            "\\frac34",
            "string",
        ),  # the same tree: the answer tree reads TeX's single-token arguments exactly
        ("x^2+2x+1", "(x+1)^2", "numeric"),  # polynomials: an exact expansion in process (answer_poly)
        ("\\sqrt{17}", "4.123105625617661", "numeric"),  # the decimal rule, applied in process at 50 digits
        ("\\text{odd}", "odd", "string"),
        ("25\\%", "0.25", "numeric"),
        ("\\frac{1}{4}", "25\\%", "numeric"),
        ("28\\%", "28", "numeric"),
        ("\\frac{1}{3}", "0.\\overline{3}", "numeric"),
        ("\\frac{1}{6}", "0.1\\overline{6}", "numeric"),
        ("\\emptyset", "\\varnothing", "string"),
        ("-5", "\u22125", "string"),
    ],
)
def test_equivalent_forms(verifier, gold, pred, method):
    verdict = verifier.check(pred, gold)
    assert verdict.correct and verdict.method == method


def test_gold_list_means_any_of(verifier):
    assert verifier.check("6", ["5", "6"]).correct
    assert not verifier.check("7", ["5", "6"]).correct
    with pytest.raises(ValueError):
        verifier.check("7", [])


@pytest.mark.parametrize("pred", [None, "", "   ", "x" * 5000])
def test_no_answer_no_credit(verifier, pred):
    assert not verifier.check(pred, "5").correct


def test_an_unreadable_gold_matches_nothing_and_warns_once(caplog):
    from recipe_bcr.grading.verify import Verdict, Verifier

    fresh = Verifier()  # its own once-per-process memory of warned golds
    gold = "\\weirdcommand{zz} \\unknownmacro"
    with caplog.at_level("WARNING", logger="recipe_bcr.grading.verify"):
        assert fresh.check("\\weirdcommand{zz} \\unknownmacro ", gold) == Verdict(True, "string")  # the gold itself
        assert fresh.check("\\weirdcommand{zz}\\unknownmacr", gold).method == "unparsed"
        assert fresh.check("5", gold).method == "unparsed"
        assert not fresh.check("6", gold).correct
    warnings = [r for r in caplog.records if "weirdcommand" in r.getMessage()]
    assert len(warnings) == 1 and "cannot be read" in warnings[0].getMessage()
    fresh.close()


def test_tower_times_out_without_credit(verifier):
    verdict = verifier.check("10^{10^{10^{10}}}", "10^{10^{10^{9}}}")
    assert not verdict.correct and verdict.method in (
        "timeout",
        "symbolic",
        "numeric",
    )  # numeric: same base, other exponent


def test_numbers_match_rules():
    third, written = Number(Fraction(1, 3), False), Number(Fraction(3333333, 10**7), True, places=7)
    assert numbers_match(third, written, 1e-6)
    assert not numbers_match(third, Number(Fraction(333, 1000), True, places=3), 1e-6)
    assert not numbers_match(Number(Fraction(0), False), Number(Fraction(1, 10**7), True, places=7), 1e-6)


@pytest.mark.parametrize(
    "gold,pred,correct",
    [
        ("8", "y = -2x", False),
        ("\\frac{\\pi}{2}", "\\left[0, \\pi\\right]", False),
        ("\\sqrt{2}", "(1, \\sqrt{2})", False),
        ("2\\pi", "\\{2\\pi, 4\\pi\\}", False),
        ("\\sqrt{3}", "\\begin{pmatrix} 7 \\\\ 1 \\end{pmatrix}", False),
        ("\\sqrt{2}", "x = \\frac{2}{\\sqrt{2}}", True),
    ],
)
def test_number_against_non_numbers_in_the_worker(verifier, gold, pred, correct):
    """A number never equals an expression in unknowns or a collection of several elements, and an
    assigned value is held to the value's rules: in the worker (which the answer tree's in-process
    refusals now spare most of these), and through the verifier."""
    status, _ = verifier.pool.check_timed(gold, pred, 5.0, {}, hard_deadline=time.monotonic() + 20)
    assert status == ("true" if correct else "false")
    verdict = verifier.check(pred, gold)
    assert verdict.correct is correct and verdict.method in (("symbolic",) if correct else ("structure", "numeric"))
