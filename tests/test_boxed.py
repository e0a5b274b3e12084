from hypothesis import given, settings
from hypothesis import strategies as st

from recipe_bcr.grading.parse.boxed import BoxIndex, last_boxed, match_braces


def extract_boxed_at(text: str, pos: int) -> str | None:
    """The paper's Algorithm 2 as written (the oracle the brace table is checked against): the content from `pos`
    (just past an opening brace) to its match, or None."""
    depth = 1
    i = pos
    n = len(text)
    while i < n:
        c = text[i]
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return text[pos:i]
        elif c == "\\" and i + 1 < n:
            i += 1
        i += 1
    return None


def test_nested_and_escaped_braces():
    text = r"x \boxed{\frac{a^2+b^2}{c\cdot(d+e)}} and \boxed{\{1,2\}} and \boxed {7} \fbox{8}"
    assert [b.content for b in BoxIndex(text).top_level] == [
        r"\frac{a^2+b^2}{c\cdot(d+e)}",
        r"\{1,2\}",
        "7",
        "8",
    ]


def test_unclosed_box_has_no_content_but_later_boxes_do():
    assert BoxIndex(r"\boxed{5").top_level == []
    assert [b.content for b in BoxIndex(r"\boxed{ oops \boxed{5}").top_level] == ["5"]


def test_a_box_holding_another_box_is_read_by_what_it_holds():
    assert [b.content for b in BoxIndex(r"\boxed{\boxed{3}} \boxed{4}").top_level] == ["3", "4"]
    # a box holding boxes beside other text is one box: its inner boxes are not answers of their own
    assert [b.content for b in BoxIndex(r"\boxed{1 then \boxed{2} and \boxed{3} }").top_level] == [
        r"1 then \boxed{2} and \boxed{3} "
    ]


def test_a_box_holding_a_barrier_is_no_box():
    assert [b.content for b in BoxIndex(r"\boxed{1 \boxed{2}} \boxed{3}", barriers=[9]).top_level] == ["2", "3"]
    text = r"\boxed{1 ### Problem 2 x}"
    assert [b.content for b in BoxIndex(text).top_level] == ["1 ### Problem 2 x"]
    assert BoxIndex(text, barriers=[text.index("#")]).top_level == []
    assert [b.content for b in BoxIndex(text, barriers=[0, len(text)]).top_level] == ["1 ### Problem 2 x"]


def test_boxedfoo_is_not_a_box():
    assert BoxIndex(r"\boxedx{3}").top_level == []


def test_last_boxed():
    assert last_boxed(r"\boxed{1} then \boxed{2}") == "2"
    assert last_boxed("none") is None


# Balanced LaTeX-ish content: text without braces/backslashes, escaped braces, nested groups.
_atom = st.text(alphabet=st.characters(blacklist_characters="{}\\", blacklist_categories=("Cs",)), max_size=8)
_escaped = st.sampled_from([r"\{", r"\}", r"\\", r"\frac", r"\,"])
_content = st.recursive(
    st.one_of(_atom, _escaped),
    lambda inner: st.one_of(
        st.builds(lambda a, b: a + b, inner, inner),
        st.builds(lambda a: "{" + a + "}", inner),
    ),
    max_leaves=25,
)


@settings(max_examples=300, deadline=None)
@given(_content, _atom, _atom)
def test_round_trip_of_random_nested_content(content, before, after):
    text = f"{before}\\boxed{{{content}}}{after}"
    boxes = BoxIndex(text).top_level
    assert boxes and boxes[0].content == content
    start = text.index("\\boxed{") + len("\\boxed{")
    assert extract_boxed_at(text, start) == content


@settings(max_examples=200, deadline=None)
@given(_content)
def test_table_parser_agrees_with_the_papers_stack_parser(content):
    text = "{" + content
    pairs = match_braces(text)
    expected = extract_boxed_at(text, 1)
    got = text[1 : pairs[0]] if 0 in pairs else None
    assert got == expected
