"""Issue 25, units: single-letter and TeX-spaced units (`8 \\text{ m}`, `5 \\mathrm{~cm}`, `9\\ \\mathrm{m}^2`)
are units of the value; the value must still be the gold's, and prose is still prose."""

from __future__ import annotations

import random

UNITS = [
    "\\text{ m}",
    "\\mathrm{~cm}",
    "\\ \\mathrm{m}^2",
    "\\text{ cm}^2",
    "\\,\\text{kg}",
    "\\mathrm{~g}",
    "\\text{ s}",
    "~\\text{km}",
    "\\text{ meters}",
    "\\mathrm{m}",
    "\\ \\text{ft}^3",
]


def test_a_value_with_units_is_the_value(verifier):
    rng = random.Random(3)
    for n in (rng.randrange(1, 10**5) for _ in range(30)):
        for unit in UNITS:
            pred = f"{n} {unit}"
            assert verifier.check(pred, str(n)).correct, pred
            assert not verifier.check(pred, str(n + 1)).correct, pred
            assert verifier.check(f"\\frac{{{n}}}{{7}}{unit}", f"\\frac{{{n}}}{{7}}").correct


def test_words_that_are_no_units_stay_prose(verifier):
    for n in range(1, 30):
        for words in ("\\text{ apples}", "\\text{ or more}", "\\mathrm{~billion}", "\\text{ possibly}"):
            assert not verifier.check(f"{n} {words}", str(n)).correct


def test_a_squared_or_cubed_unit_in_braces(verifier):
    rng = random.Random(5)
    for n in (rng.randrange(1, 10**5) for _ in range(20)):
        for unit in ("\\text{ cm}^{2}", "\\,\\mathrm{m}^{3}", "\\text{ square units}", "\\ \\text{ft}^{2}"):
            assert verifier.check(f"{n}{unit}", str(n)).correct, unit
            assert not verifier.check(f"{n + 1}{unit}", str(n)).correct, unit
        assert not verifier.check(f"{n}\\text{{ cm}}^{{4}}", str(n)).correct  # no unit has a fourth power


def test_a_unit_may_close_the_sentence(verifier):
    for n in range(1, 200, 7):
        for unit in ("\\text{ ways.}", "\\text{ cm.}", "\\text{ USD}"):
            assert verifier.check(f"{n}{unit}", str(n)).correct, unit
            assert not verifier.check(f"{n + 1}{unit}", str(n)).correct, unit
        for words in ("\\text{ ways. or 6}", "\\text{ per}", "\\text{.}\\,7"):
            assert not verifier.check(f"{n}{words}", str(n)).correct, words


def test_compound_and_powered_units(verifier):
    """`\\mathrm{~km} / \\mathrm{h}` is one unit, as are `\\mathrm{cm^2}` and `\\mathrm{~m/s^{2}}`; another value is not."""
    rng = random.Random(11)
    for n in (rng.randrange(1, 10**4) for _ in range(20)):
        for unit in (
            "\\mathrm{~km} / \\mathrm{h}",
            "\\text{ m}/\\text{s}^{2}",
            "\\,\\mathrm{cm^2}",
            "\\mathrm{~m/s^{2}}",
            "\\text{ ft}^3",
        ):
            assert verifier.check(f"{n} {unit}", str(n)).correct, unit
            assert not verifier.check(f"{n + 1} {unit}", str(n)).correct, unit
        for words in ("\\text{ km} / \\text{apples}", "\\mathrm{cm^4}", "\\mathrm{~km} / 2"):
            assert not verifier.check(f"{n} {words}", str(n)).correct, words


def test_measurement_units_and_rates_reasoning_models_write(verifier):
    """`5 cups`, `60 miles per hour`, `60 km/h`, `5 m/s` (bare or in `\\text`): the value with its unit; "per" joins
    two units only, and a unit phrase never hides another value."""
    rng = random.Random(13)
    bare = [
        "cups",
        "tablespoons",
        "acres",
        "milligrams",
        "miles per hour",
        "mph",
        "km/h",
        "m/s",
        "feet per second",
        "kWh",
        "liters per minute",
        "km per hour",
    ]
    for n in (rng.randrange(1, 10**4) for _ in range(20)):
        for unit in bare:
            for pred in (f"{n} {unit}", f"{n} \\text{{ {unit}}}"):
                assert verifier.check(pred, str(n)).correct, pred
                assert not verifier.check(pred, str(n + 1)).correct, pred
                assert not verifier.check(f"-{pred}", str(n)).correct, pred
        for words in ("miles per", "per hour", "miles per apple", "apples per hour", "billion per hour", "km/apples"):
            assert not verifier.check(f"{n} {words}", str(n)).correct, words
            assert not verifier.check(f"{n} \\text{{ {words}}}", str(n)).correct, words
    assert verifier.check("m/s", "\\frac{m}{s}").correct  # letters with no value before them stay letters


def test_letter_pairs_stay_products_of_names(verifier):
    """`mg`, `ms`, `cc`, `kb` are products of names before they are units: they are on no unit list."""
    for pair in ("mg", "ms", "cc", "kb", "ha", "kw"):
        a, b = pair
        assert verifier.check(f"2{pair}", f"2{b}{a}").correct, pair
        assert not verifier.check(f"2{pair}", "2").correct, pair


# (answer, gold, credited): both sides name a unit -> the same quantity, compared after scaling (recipe_bcr/grading/answers/si.py)
BOTH_UNITS = [
    ("5 \\text{ m}^2", "5 \\text{ cm}^2", False),
    ("5 \\text{ km}", "5 \\text{ m}", False),
    ("5 \\text{ kg}", "5 \\text{ g}", False),
    ("5 \\text{ hours}", "5 \\text{ minutes}", False),
    ("5 \\text{ cents}", "\\$5", False),
    ("5 \\text{ m/s}", "5 \\text{ km/h}", False),
    ("5 \\text{ cm}^3", "5 \\text{ cm}^2", False),
    ("5 \\text{ mm}", "5 \\text{ cm}", False),
    ("12 \\text{ m/s}^2", "12 \\text{ m/s}", False),
    ("3 \\text{ gallons}", "3 \\text{ liters}", False),
    ("7 \\text{ cm}", "7 \\text{ m}", False),
    ("5 \\text{ square centimeters}", "5 \\text{ cm}^2", True),
    ("5 \\text{ centimeters}", "5 \\text{ cm}", True),
    ("60 \\text{ mph}", "60 \\text{ miles per hour}", True),
    ("5 \\text{ km/h}", "5 \\text{ kph}", True),
    ("5 \\text{ dollars}", "\\$5", True),
    ("5 \\text{ cubic cm}", "5 \\text{ cm}^3", True),
    ("5 \\mathrm{~cm}^{2}", "5 \\text{ cm}^2", True),
    ("3 \\text{ gallons}", "3 \\text{ gallon}", True),
    ("5 \\text{ units}", "5 \\text{ cm}", True),
    ("5 \\text{ students}", "5 \\text{ people}", True),
    ("0.5 \\text{ m}", "50 \\text{ cm}", True),
    ("\\$0.05", "5 \\text{ cents}", True),
    ("1 \\text{ hour}", "60 \\text{ minutes}", True),
    ("5 \\text{ km}", "5000 \\text{ m}", True),
    ("0.5 \\text{ m}", "51 \\text{ cm}", False),
]


def test_two_units_are_the_same_answer_only_as_the_same_quantity(verifier):
    """`5 m^2` for `5 cm^2` is a wrong answer, `50 cm` for `0.5 m` a right one; a generic unit ("units",
    "students") or none on one side leaves the value alone to decide."""
    for pred, gold, credited in BOTH_UNITS:
        assert verifier.check(pred, gold).correct is credited, (pred, gold)
        assert verifier.check(gold, pred).correct is credited, (gold, pred)
