"""The toy task: short chains of additions and subtractions ("What is 4 + 3 - 2?") in the
paper's group format, with verl parquet rows.

Built so that a token budget has something real to trade (docs/miniature.md, "The toy regimes"):
- **steps** ("4 + 3 = 7. 7 - 2 = 5.") carry the computation: each is one operation of a
  small table, and the supervised answer after written steps is right unless a
  step slipped (`step_error_rate`);
- a **skip** (no steps) is a guess: the supervised answer after skipped steps is right only
  `guess_accuracy` of the time, as for a model that cannot add a chain in its head;
- **filler** ("Wait, let me double-check.", after the steps) costs tokens and changes
  nothing: answers after filler are exactly as accurate as without.
So dropping filler keeps accuracy and dropping steps costs it. Pure functions: problems, the
supervised completions, their reading back (`read_section`), GroupRows for verl's schema.
"""

from __future__ import annotations

import hashlib
import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from recipe_bcr.data.prompt import PromptStyle
from recipe_bcr.data.schema import GroupRow, Problem

FILLERS = ("Wait, let me double-check.", "Hmm, let me think again.", "Let me read the problem once more.")
NARRATION = "Let me work through this carefully, one operation at a time."
SKIP_NARRATION = "Let me think about this one and go with my first idea."
RECHECK = "Let me double-check each step."
DATA_SOURCE = "toy_chain"


@dataclass(frozen=True)
class ToySpec:
    """What the toy task draws from (hydra_configs/toy.yaml `task`)."""

    min_ops: int  # operations per problem: min_ops..max_ops
    max_ops: int
    max_operand: int  # each operation adds or subtracts 1..max_operand
    max_value: int  # running values stay in 0..max_value: every step is one fact of a small table
    skip_rate: float  # share of supervised problems answered without steps
    guess_accuracy: float  # share of those skipped answers that are right
    step_error_rate: float  # share of written-out problems where one step slips by one
    max_filler: int  # filler sentences per supervised problem: 0..max_filler
    verbose: bool = False  # R1-style traces: narration, a restatement, a re-check of every step and a
    # closing line around the steps (hydra_configs/toy_verbose.yaml); new fields
    # enter the model's cache key only when set (model.cache_key)
    recheck_rate: float = 0.0  # verbose: share of written-out problems whose steps are re-checked
    skip_start: int = 0  # >0: only problems starting at this value are skipped (at skip_rate), so a skip is
    # likely where it happens and survives top-p sampling
    # The competing regime (hydra_configs/toy_compete.yaml, issue 35); the defaults keep the earlier regimes' data
    # (and their models' cache keys) exactly as they were:
    functional_recheck: bool = False  # steps slip per step (step_error_rate each); a re-check RECOMPUTES the chain
    # and the answer follows it, so dropping it costs accuracy on long chains; filler sits
    # between steps and re-check and stays inert
    recheck_slip_rate: float = 0.0  # per-step slip rate of that re-check (below step_error_rate: it repairs)
    narration_rate: float = 1.0  # share of sections with narration ...
    restate_rate: float = 1.0  # ... and with a restatement: concise modes rare but present
    remainders: bool = False  # functional_recheck: after each step but the last, what is left of the chain ("Now 4 +
    # 4 - 1."), so the next step copies its operation from the line just written, not the k-th of the question
    # The third registration's toy (hydra_configs/toy_gaps.yaml, issue 52):
    knowledge_gaps: tuple[str, ...] = ()  # facts of the table ("5 + 3") the supervised data always gets wrong by
    # one (`gap_value`), steps and re-checks alike, and never slips onto the true value: errors GRPO cannot sample its
    # way out of, so a trained model stays off the ceiling (a 1.5B model's unsolvable problems, in miniature)
    inert_recheck_rate: float = 0.0  # share of written-out sections with an inert re-check after the steps
    # ("Reading it again: 7 - 3 + 4 - 1 gives 7."): it restates the steps' result, recomputes nothing, and the
    # answer does not follow it
    heldout_share: float = 0.0  # share of the question space (by a hash of the question text) kept out of every
    # training and warm-start group; the evaluation benchmark draws only from it (`heldout`)

    def __post_init__(self) -> None:
        object.__setattr__(self, "knowledge_gaps", tuple(self.knowledge_gaps))
        for fact in self.knowledge_gaps:
            if not re.fullmatch(r"\d+ [+-] \d+", fact) or not 0 <= _apply(fact) <= self.max_value:
                raise ValueError(
                    f'task.knowledge_gaps: {fact!r} is not a fact of the table ("a + d" or "a - d" with a result in '
                    f"0..{self.max_value})"
                )
        if not 0.0 <= self.heldout_share < 1.0:
            raise ValueError(f"task.heldout_share={self.heldout_share}: a share in [0, 1)")


def _apply(fact: str) -> int:
    a, op, d = fact.split()
    return int(a) + int(d) if op == "+" else int(a) - int(d)


def gap_value(fact: str, spec: ToySpec) -> int:
    """What the supervised data writes for a knowledge gap: one above the truth, or one below at the table's top."""
    true = _apply(fact)
    return true + 1 if true + 1 <= spec.max_value else true - 1


def heldout(question: str, spec: ToySpec) -> bool:
    """Whether a question belongs to the held-out part of the question space (`ToySpec.heldout_share`)."""
    if not spec.heldout_share:
        return False
    digest = hashlib.sha256(" ".join(question.split()).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < spec.heldout_share


def make_problem(rng: random.Random, spec: ToySpec, index: int, from_heldout: bool = False) -> Problem:
    """A problem drawn from the training part of the question space (`from_heldout`: from the held-out part); draws
    are repeated until one lands there, so without a held-out share the stream is the earlier toys' exactly."""
    while True:
        problem = _draw(rng, spec, index)
        if heldout(problem.question, spec) == from_heldout:
            return problem


def _draw(rng: random.Random, spec: ToySpec, index: int) -> Problem:
    value = rng.randint(1, spec.max_value)
    text = str(value)
    ops = rng.randint(spec.min_ops, spec.max_ops)
    for _ in range(ops):
        d = rng.randint(1, spec.max_operand)
        plus = value + d <= spec.max_value and (value - d < 0 or rng.random() < 0.5)
        value = value + d if plus else value - d
        text += f" {'+' if plus else '-'} {d}"
    return Problem(
        problem_id=f"toy-{index}",
        question=f"What is {text}?",
        answers=(str(value),),
        difficulty=float(ops),
        topic="arithmetic chain",
    )


def _question_chain(problem: Problem) -> str:
    return problem.question.removeprefix("What is ").removesuffix("?")


def chain(problem: Problem) -> tuple[int, list[tuple[str, int]]]:
    """The start value and the (op, operand) list of a toy question."""
    tokens = _question_chain(problem).split()
    return int(tokens[0]), [(tokens[k], int(tokens[k + 1])) for k in range(1, len(tokens), 2)]


def steps_text(problem: Problem, slip_at: int | None = None, slip: int = 0) -> tuple[str, int]:
    """The written steps and the value they reach; step `slip_at` (if any) is off by `slip`."""
    value, ops = chain(problem)
    parts = []
    for k, (op, d) in enumerate(ops):
        new = value + d if op == "+" else value - d
        if k == slip_at:
            new += slip
        parts.append(f"{value} {op} {d} = {new}.")
        value = new
    return " ".join(parts), value


def _words(steps: str) -> list[str]:
    """A re-check of written steps in words: it repeats them and adds nothing (never counted as a step)."""
    return [
        f"Yes, {a} {'plus' if op == '+' else 'minus'} {d} is {r}."
        for a, op, d, r in re.findall(r"(\d++) ([+-]) (\d++) = (-?\d++)\.", steps)
    ]


QUESTION = re.compile(r"What is ([^?]*+)\?")  # a toy question in a prompt; group 1 its chain
RESTATE = "The problem asks for {}."
_RESTATED = re.compile(r"The problem asks for ([^.]*+)\.")


def restated(section: str) -> str | None:
    """The chain a verbose section restates ("2 + 4 - 3"), None when it restates nothing."""
    m = _RESTATED.search(section)
    return m.group(1) if m else None


def target_section(problem: Problem, rng: random.Random, spec: ToySpec) -> tuple[str, str]:
    """One supervised problem's reasoning and answer: steps or a guess, then filler (verbose: with
    narration, a restatement of the question, a re-check and a closing line, none of which change the answer;
    functional_recheck: see compete_section)."""
    if spec.functional_recheck:
        return compete_section(problem, rng, spec)
    filler = [rng.choice(FILLERS) for _ in range(rng.randint(0, spec.max_filler))]
    gold = int(problem.answers[0])
    restate = RESTATE.format(_question_chain(problem))
    if rng.random() < spec.skip_rate and spec.skip_start in (0, chain(problem)[0]):
        answer = gold if rng.random() < spec.guess_accuracy else max(0, gold + rng.choice((-3, -2, -1, 1, 2, 3)))
        lead = [SKIP_NARRATION, restate] if spec.verbose else []
        return " ".join([*lead, *filler]), str(answer)
    ops = len(chain(problem)[1])
    slip_at = rng.randrange(ops) if rng.random() < spec.step_error_rate else None
    steps, answer = steps_text(problem, slip_at, rng.choice((-1, 1)))
    if not spec.verbose:
        return " ".join([steps, *filler]), str(answer)
    check = [RECHECK, *_words(steps)] if rng.random() < spec.recheck_rate else []
    return " ".join([NARRATION, restate, steps, *check, *filler, f"So the final answer is {answer}."]), str(answer)


CHECK = "Check:"
INERT_CHECK = "Reading it again: {} gives {}."  # ToySpec.inert_recheck_rate: re-reads, repairs nothing
_INERT = re.compile(r"Reading it again: \d++(?: [+-] \d++)*+ gives -?\d++\.")
REMAINDER = "Now"  # "Now 7 - 2 + 1.": what is left of the chain (ToySpec.remainders)
CLOSING = "So the final answer is {}."


def _slipped(value: int, rng: random.Random, spec: ToySpec, avoid: int | None = None) -> int:
    """A one-off slip of a step's result, kept inside 0..max_value where it can be (and off `avoid`: a knowledge
    gap never slips onto the truth)."""
    options = [v for v in (value - 1, value + 1) if 0 <= v <= spec.max_value and v != avoid]
    return rng.choice(options or ([value + 1] if avoid is None else [value]))


def written_steps(
    problem: Problem, rng: random.Random, spec: ToySpec, slip_rate: float, check: bool = False
) -> tuple[str, int]:
    """The chain worked out step by step, each step's result slipping by one with `slip_rate`; the running value
    carries a slip on. Steps read "4 + 3 = 7."; a re-check's read "4 + 3 is 7." (never counted as a step). With
    `spec.remainders` each step but the last is followed by the rest of the chain from its result ("Now 7 - 2."):
    a tiny model copies an operation reliably from the line it has just written, not by counting in the question."""
    value, ops = chain(problem)
    parts = []
    for k, (op, d) in enumerate(ops):
        fact = f"{value} {op} {d}"
        new = _apply(fact)
        if fact in spec.knowledge_gaps:
            new = gap_value(fact, spec)
            if rng.random() < slip_rate:
                new = _slipped(new, rng, spec, avoid=_apply(fact))
        elif rng.random() < slip_rate:
            new = _slipped(new, rng, spec)
        parts.append(f"{fact} {'is' if check else '='} {new}.")
        if spec.remainders and k + 1 < len(ops):
            parts.append(f"{REMAINDER} {new}" + "".join(f" {o} {e}" for o, e in ops[k + 1 :]) + ".")
        value = new
    return " ".join(parts), value


def compete_section(problem: Problem, rng: random.Random, spec: ToySpec) -> tuple[str, str]:
    """A section of the competing regime (issue 35): [narration] [restatement] then either steps, [filler],
    [re-check] and a closing line, or (skip_rate, on any problem) filler and a guess. Each step slips with
    step_error_rate, so long chains go wrong more often; the re-check recomputes the chain with the lower
    recheck_slip_rate and the answer follows it (a repair), while filler changes nothing."""
    narrate = rng.random() < spec.narration_rate
    restate = rng.random() < spec.restate_rate
    filler = [rng.choice(FILLERS) for _ in range(rng.randint(0, spec.max_filler))]
    gold = int(problem.answers[0])
    lead = [RESTATE.format(_question_chain(problem))] if restate else []
    if rng.random() < spec.skip_rate and spec.skip_start in (0, chain(problem)[0]):
        answer = gold if rng.random() < spec.guess_accuracy else max(0, gold + rng.choice((-3, -2, -1, 1, 2, 3)))
        return " ".join([*([SKIP_NARRATION] if narrate else []), *lead, *filler, CLOSING.format(answer)]), str(answer)
    steps, answer = written_steps(problem, rng, spec, spec.step_error_rate)
    inert = []
    if spec.inert_recheck_rate and rng.random() < spec.inert_recheck_rate:  # no draw at 0: earlier toys' data as was
        inert = [INERT_CHECK.format(_question_chain(problem), answer)]
    check = []
    if rng.random() < spec.recheck_rate:
        rechecked, answer = written_steps(problem, rng, spec, spec.recheck_slip_rate, check=True)
        check = [CHECK, rechecked]
    body = [*([NARRATION] if narrate else []), *lead, steps, *filler, *inert, *check, CLOSING.format(answer)]
    return " ".join(body), str(answer)


_CHECKED = re.compile(r"\d++ [+-] \d++ is -?\d++\.")


def categories(section: str) -> dict[str, bool]:
    """Which optional parts a section of the competing regime holds (the report's per-category token counts)."""
    return {
        "narration": NARRATION in section or SKIP_NARRATION in section,
        "restatement": restated(section) is not None,
        "steps": bool(_STEP.search(section)),
        "filler": any(f in section for f in FILLERS),
        "recheck": CHECK in section or bool(_CHECKED.search(section)),
        "inert_recheck": bool(_INERT.search(section)),
    }


def category_texts(section: str) -> dict[str, list[str]]:
    """The text of each redundant category (`categories`) in one section: narration, restatement, filler, the
    re-check from its "Check:" to its last re-computed step (its remainder lines included), and inert re-checks."""
    has = categories(section)
    chain = restated(section)
    checked = list(_CHECKED.finditer(section))
    start = section.find(CHECK)
    if not has["recheck"]:
        recheck = []
    elif start >= 0 and checked and checked[-1].end() > start:
        recheck = [section[start : checked[-1].end()]]
    else:
        recheck = [CHECK] * section.count(CHECK) + [m.group(0) for m in checked]
    return {
        "narration": [s for s in (NARRATION, SKIP_NARRATION) for _ in range(section.count(s))],
        "restatement": [RESTATE.format(chain)] if has["restatement"] and chain is not None else [],
        "filler": [f for f in FILLERS for _ in range(section.count(f))],
        "recheck": recheck,
        "inert_recheck": _INERT.findall(section),
    }


def target_completion(problems: Sequence[Problem], rng: random.Random, spec: ToySpec) -> str:
    """A supervised answer to a group, in the format the BCR reward credits."""
    parts = []
    for i, p in enumerate(problems, start=1):
        reasoning, answer = target_section(p, rng, spec)
        parts.append(f"### Problem {i}\n{reasoning}\nAnswer{i}: \\boxed{{{answer}}}".replace("\n\n", "\n"))
    return "\n\n".join(parts)


_STEP = re.compile(r"\d++ [+-] \d++ = -?\d++\.")


def read_section(text: str) -> tuple[int, int]:
    """(steps written, filler sentences) in one problem's section of a completion."""
    return len(_STEP.findall(text)), sum(text.count(f) for f in FILLERS)


_HEAD = re.compile(r"### Problem \d++")
_ANSWER = re.compile(r"Answer ?\d*+: ?\\boxed\{[^{}]*+\}")


def essential(text: str) -> str:
    """What of one problem's section carries information: its header, its written steps and its
    answer line. Everything else (narration, restatements, re-checks, filler) is redundancy."""
    parts = [m.group(0) for m in _HEAD.finditer(text)][:1] + _STEP.findall(text) + _ANSWER.findall(text)[:1]
    return "\n".join(parts)


def redundant_chars(text: str) -> tuple[int, int]:
    """(characters of a section, of them redundant): outside its essential text. The one measure behind the
    report's redundancy column and the rollout table (the essential lines' joins can outnumber the spaces)."""
    total = len(text.strip())
    return total, max(0, total - len(essential(text)))


def make_groups(
    n: int, count: int, seed: int, spec: ToySpec, split: str, prompt_style: PromptStyle = "group"
) -> list[GroupRow]:
    if prompt_style == "single" and n != 1:
        raise ValueError(f"the single-problem prompt takes one problem per row, got n={n}")
    rng = random.Random(f"{seed}:{split}:{n}")
    return [
        GroupRow(
            problems=[make_problem(rng, spec, k * n + j) for j in range(n)],
            split=split,
            index=k,
            data_source=DATA_SOURCE,
            prompt_style=prompt_style,
        )
        for k in range(count)
    ]


def write_toy_data(
    out_dir: Path,
    n: int,
    train_groups: int,
    val_groups: int,
    seed: int,
    spec: ToySpec,
    prompt_style: PromptStyle = "group",
    token_cap: Callable[[Problem], int] | None = None,
) -> dict[str, Path]:
    """train_n{N}.parquet and val_n{N}.parquet in verl's schema, staged and renamed together. `token_cap`: each
    single-problem row's own budget (the oracle-allocation control)."""
    from recipe_bcr.data.io import Staging
    from recipe_bcr.data.schema import SCHEMA, to_record

    if token_cap is not None and n != 1:
        raise ValueError(f"a token cap per row is a single problem's budget, got n={n}")
    out_dir = Path(out_dir)
    paths = {"train": out_dir / f"train_n{n}.parquet", "val": out_dir / f"val_n{n}.parquet"}
    with Staging() as stage:
        for split, count in (("train", train_groups), ("val", val_groups)):
            rows = make_groups(n, count, seed, spec, split, prompt_style)
            if token_cap is not None:
                rows = [replace(r, token_cap=token_cap(r.problems[0])) for r in rows]
            stage.parquet([to_record(r) for r in rows], SCHEMA, paths[split])
    return paths


def benchmark_problems(count: int, seed: int, spec: ToySpec) -> list[Problem]:
    """The evaluation problems: with a held-out share, `count` distinct questions from the held-out part (in no
    training or warm-start group); without one, the earlier toys' draws (repeats allowed)."""
    rng = random.Random(f"{seed}:benchmark")
    if not spec.heldout_share:
        return [make_problem(rng, spec, k) for k in range(count)]
    seen: dict[str, Problem] = {}
    for _ in range(100 * count):
        problem = make_problem(rng, spec, len(seen), from_heldout=True)
        seen.setdefault(problem.question, problem)
        if len(seen) == count:
            return list(seen.values())
    raise ValueError(
        f"the toy's held-out questions: {len(seen)} distinct after {100 * count} draws, {count} wanted; "
        "ask for fewer evaluation problems or raise task.heldout_share"
    )


def write_toy_benchmark(path: Path, count: int, seed: int, spec: ToySpec) -> Path:
    """A plain benchmark file (problem, answer per JSON line) for the eval harness."""
    import json

    lines = [json.dumps({"problem": p.question, "answer": p.answers[0]}) for p in benchmark_problems(count, seed, spec)]
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text("\n".join(lines) + "\n")
    tmp.replace(path)
    return path
