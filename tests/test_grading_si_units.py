"""Issue 53, class 6: units beyond the closed list, read by a grammar (SI prefix x base unit x exponent) rather than a
longer list: astronomy (parsecs, AU), chemistry (g/mol), physics (m/s^2, erg/s, farads, compound units with negative
exponents). One quantity in two units is one answer (compared exactly after scaling); other quantities, or the same
unit with another value, never are."""

from __future__ import annotations

from fractions import Fraction

import pytest

SAME = [
    # one unit, spelled as a symbol or a name, singular or plural, any case for names
    ("5 \\text{ pc}", "5 \\text{ parsecs}"),
    ("5 \\text{ pc}", "5 \\text{ parsec}"),
    ("2 \\text{ F}", "2 \\text{ farads}"),
    ("2 \\text{ F}", "2 \\text{ Farad}"),
    ("3 \\text{ J}", "3 \\text{ joules}"),
    # prefixes
    ("5000 \\text{ pc}", "5 \\text{ kpc}"),
    ("6 \\text{ Mpc}", "6000 \\text{ kpc}"),
    ("2 \\text{ nF}", "2000 \\text{ pF}"),
    ("2 \\mu\\text{F}", "2 \\text{ microfarads}"),
    ("2 \\mu\\text{F}", "2 \\mathrm{\\mu F}"),
    ("2 \\text{ μF}", "0.002 \\text{ mF}"),
    ("1.5 \\text{ keV}", "1500 \\text{ eV}"),
    ("2 \\times 10^{-6} \\text{ F}", "2 \\mu F"),
    ("3 \\text{ μm}", "3 \\mu m"),
    # compound units, with / or negative exponents
    ("18 \\text{ g/mol}", "18 \\text{ g mol}^{-1}"),
    ("18 \\text{ g/mol}", "18 \\mathrm{~g} / \\mathrm{mol}"),
    ("0.018 \\text{ kg/mol}", "18 \\text{ g/mol}"),
    ("9.8 \\text{ m/s}^2", "9.8 \\text{ m s}^{-2}"),
    ("9.8 \\text{ m/s^2}", "9.8 \\mathrm{m\\,s^{-2}}"),
    ("5 \\text{ kg m}^{-3}", "5 \\text{ kg/m}^3"),
    ("5 \\text{ kg/m}^3", "0.005 \\text{ g/cm}^3"),
    ("3 \\times 10^{33} \\text{ erg/s}", "3 \\times 10^{33} \\text{ erg s}^{-1}"),
    ("3 \\times 10^{33} \\text{ erg/s}", "3 \\times 10^{26} \\text{ W}"),
    ("10 \\text{ N}", "10 \\text{ kg m s}^{-2}"),
    ("9.8 \\text{ m/s}^2", "9.8 \\mathrm{~m} \\mathrm{~s}^{-2}"),
    ("9.8 \\text{ m/s}^2", "9.8 \\frac{\\text{m}}{\\text{s}^2}"),
    ("5 \\text{ Pa}", "5 \\frac{\\text{kg}}{\\text{m s}^2}"),
    ("1.2 \\times 10^{-5} \\text{ F}", "12 μF"),
    ("1.2 \\times 10^{-5} \\text{ F}", "12\\,\\mu\\text{F}"),
    ("300 \\text{ K}", "300 \\mathrm{~K}"),
    ("18 \\text{ g/mol}", "18 \\mathrm{g \\cdot mol^{-1}}"),
    ("5 \\text{ J/K}", "5 \\text{ J K}^{-1}"),
    ("1 \\text{ kJ}", "1000 \\text{ N m}"),
    ("2 \\text{ L}", "2000 \\text{ mL}"),
    ("2 \\text{ L}", "2000 \\text{ cm}^3"),
    # a value with a unit answers a gold without one
    ("5", "5 \\text{ pc}"),
    ("18", "18 \\text{ g/mol}"),
    ("9.8", "9.8 \\text{ m/s}^2"),
    ("2", "2 \\text{ F}"),
]

DIFFERENT = [
    ("5 \\text{ pc}", "5 \\text{ kpc}"),
    ("5 \\text{ pc}", "5 \\text{ ly}"),
    ("1 \\text{ AU}", "1 \\text{ pc}"),
    ("18 \\text{ g/mol}", "18 \\text{ kg/mol}"),
    ("18 \\text{ g/mol}", "18 \\text{ g}"),
    ("9.8 \\text{ m/s}^2", "9.8 \\text{ m/s}"),
    ("9.8 \\text{ m/s}^2", "9.8 \\text{ m s}^{-1}"),
    ("3 \\times 10^{33} \\text{ erg/s}", "3 \\times 10^{33} \\text{ W}"),
    ("3 \\times 10^{33} \\text{ erg/s}", "3 \\times 10^{33} \\text{ erg}"),
    ("2 \\text{ mF}", "2 \\text{ F}"),
    ("2 \\text{ mW}", "2 \\text{ MW}"),
    ("5 \\text{ kg m}^{-3}", "5 \\text{ kg/m}^2"),
    ("5", "6 \\text{ pc}"),
    ("5", "5 \\text{ per pc}"),
    ("5", "5 \\text{ pc per}"),
    ("5", "5 \\text{ kg}^{4}"),
    ("5 \\text{ kg/m}^3", "5 \\frac{\\text{kg}}{\\text{m}^2}"),
    ("5 \\text{ Pa}", "5 \\frac{\\text{kg}}{\\text{m s}}"),
    ("9.8 \\text{ m/s}^2", "9.8 \\mathrm{~m} \\mathrm{~s}^{-1}"),
    ("2 \\times 10^{-6} \\text{ F}", "2 \\mu H"),
]


@pytest.mark.parametrize("gold,pred", SAME)
def test_one_quantity_in_two_units_is_one_answer(verifier, gold, pred):
    assert verifier.check(pred, gold).correct


@pytest.mark.parametrize("gold,pred", DIFFERENT)
def test_another_quantity_or_value_never_scores(verifier, gold, pred):
    assert not verifier.check(pred, gold).correct


@pytest.mark.parametrize(
    "unit,dims,scale",
    [
        ("kpc", {"m": 1}, Fraction(30856775814913673000)),
        ("g mol^-1", {"g": 1, "mol": -1}, Fraction(1)),
        ("m/s^2", {"m": 1, "s": -2}, Fraction(1)),
        ("μF", {"g": -1, "m": -2, "s": 4, "A": 2}, Fraction(1, 10**9)),
        ("square meters per second", {"m": 2, "s": -1}, Fraction(1)),
    ],
)
def test_the_grammar_reads_prefix_base_and_exponent(unit, dims, scale):
    from recipe_bcr.grading.answers.si import read_unit

    assert read_unit(unit) == (dims, scale)


@pytest.mark.parametrize("text", ["apples", "per hour", "km per", "kg^4", "mg^{1/2}", "ways", "as"])
def test_the_grammar_reads_no_other_words(text):
    from recipe_bcr.grading.answers.si import read_unit

    assert read_unit(text) is None
