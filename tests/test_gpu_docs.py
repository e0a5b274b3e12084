"""docs/gpu.md says what was measured and what was not: every figure from a GPU has a committed output or is
labelled an unrepeated observation; the scaling section's numbers are the composed config's; the metric limits
that come from the toy are labelled so."""

import re
from pathlib import Path

from recipe_bcr.miniature import gpu_check
from recipe_bcr.verl_ext.checks import compose_recipe

ROOT = Path(__file__).resolve().parents[1]
DOC = (ROOT / "docs" / "gpu.md").read_text(encoding="utf-8")
HARDWARE = re.compile(r"\b(H100|H200|A100|L40S|RTX)\b")


def _paragraphs(text: str) -> list[str]:
    """Paragraphs and table rows (a row is its own claim)."""
    out = []
    for block in re.split(r"\n\s*\n", text):
        rows = [line for line in block.splitlines() if line.startswith("|")]
        out += rows if rows else [block]
    return out


def test_every_figure_from_a_gpu_is_committed_or_labelled_unrepeated():
    unlabelled = []
    for para in _paragraphs(DOC):
        if not HARDWARE.search(para) or not re.search(r"\d+(\.\d+)? ?(s|min|GB|GiB)\b|\b0\.\d+", para):
            continue
        files = [f for f in re.findall(r"`?(benchmarks/[\w./-]+)`?", para) if (ROOT / f).exists()]
        if not (files or "unrepeated" in para or "arithmetic" in para):
            unlabelled.append(para[:160])
    assert unlabelled == []


def test_the_scaling_section_states_what_more_gpus_buy_from_the_config():
    section = DOC[DOC.index("## More GPUs") :].split("\n## ")[0]
    cfg = compose_recipe([])
    step = int(cfg.data.train_batch_size) * int(cfg.actor_rollout_ref.rollout.n)
    assert f"the paper's {step} completions" in section
    assert f"{step // 8} per GPU on 8 GPUs, {step // 16} on 16" in section
    assert "Two jobs side by side" in section and "departure from the paper" in section
    assert f"3,000 groups // 16 x {cfg.trainer.total_epochs} = {3000 // 16 * int(cfg.trainer.total_epochs)}" in section
    assert "not a measurement" in section


def test_metric_limits_from_the_toy_are_labelled_so():
    [row] = [line for line in DOC.splitlines() if line.startswith("| `training/rollout_probs_diff_max`")]
    assert "toy-derived" in row and "has not been measured" in row and "no threshold for a real base" in row
    assert f"limit {gpu_check.PROBS_DIFF_LIMIT['gpu']}: a toy limit" in DOC.replace("\n", " ")
