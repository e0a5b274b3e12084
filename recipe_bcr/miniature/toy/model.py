"""Build the tiny toy model: a BPE tokenizer trained on the toy corpus, a small Qwen3
(`Qwen3ForCausalLM` from a config), and a short supervised pass on toy completions.

Made on the fly in about a minute on 2 CPU cores and cached by its settings: the folder
holds a complete Hugging Face model (config.json, model.safetensors, tokenizer with a chat
template, generation_config.json) that verl, the eval harness and `from_pretrained` load.
"""

from __future__ import annotations

import hashlib
import json
import logging
import random
import re
import shutil
import tempfile
from dataclasses import MISSING, asdict, dataclass, fields
from pathlib import Path
from typing import Any

from recipe_bcr.data.prompt import build_messages
from recipe_bcr.miniature.toy.task import ToySpec, make_groups, target_completion

logger = logging.getLogger(__name__)

# ChatML, as Qwen3 writes it (without the thinking block): the toy model is not a thinking model.
CHAT_TEMPLATE = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n{{ message['content'] }}<|im_end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]


@dataclass(frozen=True)
class ModelSpec:
    """Architecture and warm-start settings (hydra_configs/toy.yaml `model`)."""

    vocab_size: int
    hidden_size: int
    layers: int
    heads: int
    sft_steps: int
    sft_batch: int
    sft_lr: float
    n_values: tuple[int, ...]
    groups_per_n: int  # supervised groups per group size (and for the single-problem prompt)
    seed: int
    threads: int  # torch threads for the warm start (1: no oversubscription on a busy machine)
    length_buckets: int = 0  # >0: batches of similar length (blocks of this many batches sorted by length), so a
    # mixture of N = 1..5 pads less (hydra_configs/toy_compete.yaml); 0: the order of the
    # first models, whose recorded losses a rebuild reproduces


def load_specs(overrides: list[str] | None = None) -> tuple[ToySpec, ModelSpec, dict]:
    """hydra_configs/toy.yaml (+ dotlist overrides) -> task spec, model spec, the rest.
    `config=toy_verbose` among the overrides reads hydra_configs/toy_verbose.yaml instead (the
    paper-like regime); the rest always holds `model_dir` and `shipped` (see ensure_model)."""
    from importlib import resources

    from omegaconf import OmegaConf

    rest = [o for o in overrides or [] if not o.startswith("config=")]
    name = next((o.split("=", 1)[1] for o in overrides or [] if o.startswith("config=")), "toy")

    def read(name: str, seen: tuple[str, ...] = ()) -> Any:
        """A toy config over its `defaults` (Hydra's spelling: the toy configs it amends, then `_self_`)."""
        path = Path(str(resources.files("hydra_configs") / f"{name}.yaml"))
        if not name.startswith("toy") or not path.exists() or name in seen:
            why = "refers to itself" if name in seen else "does not exist"
            raise ValueError(f"config={name}: hydra_configs/{name}.yaml {why} (a toy config: toy, toy_compete, ...)")
        own = OmegaConf.load(path)
        defaults = own.pop("defaults", [])
        if not OmegaConf.is_list(defaults) and not isinstance(defaults, list):
            raise ValueError(f"hydra_configs/{name}.yaml defaults: want a list of toy configs, got {defaults!r}")
        parents = [read(str(d), (*seen, name)) for d in defaults if d != "_self_"]
        return OmegaConf.merge(*parents, own)

    cfg = OmegaConf.merge(
        {"model_dir": MODEL_DIR, "shipped": SHIPPED.name, "device": "cpu"}, read(name), OmegaConf.from_dotlist(rest)
    )
    raw = OmegaConf.to_container(cfg, resolve=True)
    try:
        model = dict(raw["model"], n_values=tuple(raw["model"]["n_values"]))
        return ToySpec(**raw["task"]), ModelSpec(**model), raw
    except (TypeError, KeyError) as e:
        raise ValueError(f"hydra_configs/{name}.yaml with overrides {rest}: {e}") from None


def cache_key(spec: ToySpec, mspec: ModelSpec) -> str:
    """Settings key of a model. Task fields added after the first committed model (verbose,
    recheck_rate, skip_start) enter it only when they differ from their defaults, so that model keeps its key."""
    defaults = {f.name: f.default for f in fields(ToySpec) if f.default is not MISSING}
    task = {k: v for k, v in asdict(spec).items() if k not in defaults or v != defaults[k]}
    mdefaults = {f.name: f.default for f in fields(ModelSpec) if f.default is not MISSING}
    model = {k: v for k, v in asdict(mspec).items() if k not in mdefaults or v != mdefaults[k]}
    blob = json.dumps({"task": task, "model": model, "format": 2}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:12]


MODEL_DIR = "toy-qwen3"  # the tiny_qwen3 preset's path under the cache dir
RESOURCES = Path(__file__).resolve().parents[1] / "resources"
SHIPPED = RESOURCES / "toy_model"  # the committed warm start of hydra_configs/toy.yaml
# BCR trained from toy_gaps_fill20's base by the third miniature, committed for the demo (`python -m recipe_bcr
# paper out=DIR registration=paper_v3 --ship RUN`); provenance.json beside the weights says which run and settings
# made it.
PAPER_TRAINED = RESOURCES / "toy_model_gaps_fill20_bcr"
PROVENANCE = "provenance.json"


def _corpus(spec: ToySpec, mspec: ModelSpec, rng: random.Random) -> list[tuple[list[dict], str]]:
    pairs = []
    styles = [(n, "group") for n in mspec.n_values] + [(1, "single")]  # single: the N=1 baseline's prompt
    for n, style in styles:
        for row in make_groups(n, mspec.groups_per_n, mspec.seed, spec, f"sft-{style}", style):
            messages = build_messages([p.question for p in row.problems], style=style)
            pairs.append((messages, target_completion(row.problems, rng, spec)))
    rng.shuffle(pairs)
    return pairs


def train_tokenizer(texts: list[str], vocab_size: int):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=SPECIAL,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(texts, trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok, eos_token="<|im_end|>", pad_token="<|endoftext|>", bos_token=None
    )
    fast.chat_template = CHAT_TEMPLATE
    return fast


def _render(tokenizer, messages: list[dict]) -> list[int]:
    return list(tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=True, return_dict=False))


def warm_start(
    spec: ToySpec,
    mspec: ModelSpec,
    progress: bool = True,
    steps: int | None = None,
    device: str = "cpu",
    checkpoint: Path | None = None,
    every: int = 100,
):
    """The supervised warm start: (model on the CPU, tokenizer, loss of each step). `steps` stops it early with
    the full run's schedule, so its losses are the first `steps` of the full run's (a cheap check of
    a rebuild against the losses a committed model recorded). `device="cuda"` trains on a GPU: same data, order
    and initial weights (made on the CPU), other rounding, so other weights than a CPU build. `checkpoint`: a file
    the state is saved to every `every` steps and resumed from (a CPU build takes hours and may span sittings); a
    resumed build equals an uninterrupted one (the batch order is a function of the step, and nothing else is random)."""
    import torch
    from tqdm import tqdm
    from transformers import GenerationConfig, Qwen3Config, Qwen3ForCausalLM

    if steps is not None and not 1 <= steps <= mspec.sft_steps:
        raise ValueError(f"warm_start steps={steps}: between 1 and model.sft_steps={mspec.sft_steps}")
    gpu = re.fullmatch(r"cuda(?::(\d+))?", device)
    if device != "cpu" and not (gpu and int(gpu.group(1) or 0) < torch.cuda.device_count()):
        raise ValueError(
            f"toy warm start device={device}: no such device here (cpu, or cuda / cuda:K on a machine with K+1 GPUs)"
        )
    rng = random.Random(mspec.seed)
    torch.manual_seed(mspec.seed)
    torch.set_num_threads(mspec.threads)
    pairs = _corpus(spec, mspec, rng)
    tokenizer = train_tokenizer(["".join(m["content"] for m in msgs) + c for msgs, c in pairs], mspec.vocab_size)
    eos = tokenizer.convert_tokens_to_ids("<|im_end|>")
    pad = tokenizer.convert_tokens_to_ids("<|endoftext|>")
    config = Qwen3Config(
        vocab_size=len(tokenizer),
        hidden_size=mspec.hidden_size,
        intermediate_size=2 * mspec.hidden_size,
        num_hidden_layers=mspec.layers,
        num_attention_heads=mspec.heads,
        num_key_value_heads=mspec.heads,
        head_dim=mspec.hidden_size // mspec.heads,
        max_position_embeddings=2048,
        tie_word_embeddings=True,
        eos_token_id=eos,
        pad_token_id=pad,
        bos_token_id=None,
    )
    model = Qwen3ForCausalLM(config)
    model.to(device)
    examples = []
    for messages, completion in pairs:
        prompt = _render(tokenizer, messages)
        answer = tokenizer(completion, add_special_tokens=False)["input_ids"] + [eos]
        examples.append((prompt, answer))
    if mspec.length_buckets:
        examples = _bucketed(examples, mspec.sft_batch, mspec.length_buckets, random.Random(f"{mspec.seed}:buckets"))
    opt = torch.optim.AdamW(model.parameters(), lr=mspec.sft_lr, weight_decay=0.0)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: 1.0 - s / mspec.sft_steps)
    model.train()
    losses: list[float] = []
    state = _resume(checkpoint, cache_key(spec, mspec), device)
    if state:
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["opt"])
        sched.load_state_dict(state["sched"])
        losses = state["losses"]
        logger.info("toy warm start: resuming at step %d from %s", len(losses), checkpoint)
    bar = tqdm(
        range(len(losses), steps or mspec.sft_steps),
        desc="toy model: supervised warm start",
        disable=not progress,
        initial=len(losses),
        total=steps or mspec.sft_steps,
    )
    for step in bar:
        batch = [examples[(step * mspec.sft_batch + j) % len(examples)] for j in range(mspec.sft_batch)]
        width = max(len(p) + len(a) for p, a in batch)
        ids = torch.full((len(batch), width), pad, dtype=torch.long)
        labels = torch.full_like(ids, -100)
        mask = torch.zeros_like(ids)
        for i, (p, a) in enumerate(batch):
            seq = p + a
            ids[i, : len(seq)] = torch.tensor(seq)
            labels[i, len(p) : len(seq)] = torch.tensor(a)
            mask[i, : len(seq)] = 1
        loss = model(input_ids=ids.to(device), attention_mask=mask.to(device), labels=labels.to(device)).loss
        loss.backward()
        opt.step()
        sched.step()
        opt.zero_grad()
        losses.append(float(loss.item()))
        bar.set_postfix(loss=f"{losses[-1]:.3f}")
        if checkpoint is not None and (step + 1) % every == 0:
            _save_state(checkpoint, cache_key(spec, mspec), model, opt, sched, losses)
    model.to("cpu").eval()
    model.generation_config = GenerationConfig(eos_token_id=eos, pad_token_id=pad, do_sample=True)
    return model, tokenizer, losses


def _resume(path: Path | None, key: str, device: str) -> dict | None:
    """A saved warm-start state for these settings (None: none, or one of other settings, which is ignored)."""
    import torch

    if path is None or not Path(path).exists():
        return None
    state = torch.load(path, map_location=device, weights_only=False)
    return state if state.get("key") == key else None


def _save_state(path: Path, key: str, model, opt, sched, losses: list[float]) -> None:
    """The warm start's state after `len(losses)` steps, written then renamed (an interrupted save keeps the last)."""
    import torch

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    state = {"key": key, "model": model.state_dict(), "opt": opt.state_dict(), "sched": sched.state_dict()}
    torch.save(state | {"losses": list(losses)}, tmp)
    tmp.replace(path)


def _bucketed(examples: list, batch: int, block: int, rng: random.Random) -> list:
    """The examples reordered so that each run of `batch` holds similar lengths: blocks of `block` batches are
    sorted by length and cut into batches, and the batches shuffled (every example kept, once)."""
    size = batch * block
    batches = []
    for start in range(0, len(examples), size):
        chunk = sorted(examples[start : start + size], key=lambda e: len(e[0]) + len(e[1]))
        batches += [chunk[k : k + batch] for k in range(0, len(chunk), batch)]
    rng.shuffle(batches)
    return [e for b in batches for e in b]


def build_model(out: Path, spec: ToySpec, mspec: ModelSpec, progress: bool = True, device: str = "cpu") -> Path:
    """Write the warm-started model to `out`, with each step's loss in toy_spec.json (`sft_losses`: what
    tests/test_toy_model.py checks a rebuild against) and the device that trained it. An interrupted build resumes
    from its last saved state (`.<out>.warm-start.pt` beside it) when run again with the same settings."""
    out = Path(out)
    checkpoint = out.parent / f".{out.name}.warm-start.pt"
    saved = save_model(
        out, *warm_start(spec, mspec, progress, device=device, checkpoint=checkpoint), spec, mspec, device=device
    )
    checkpoint.unlink(missing_ok=True)
    return saved


def save_model(
    out: Path, model, tokenizer, losses: list[float], spec: ToySpec, mspec: ModelSpec, device: str = "cpu"
) -> Path:
    """A Hugging Face folder at `out` (staged, then renamed: a failed build leaves nothing)."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    stage = Path(tempfile.mkdtemp(prefix=".toy-model-", dir=out.parent))
    try:
        model.save_pretrained(stage, safe_serialization=True)
        tokenizer.save_pretrained(stage)
        (stage / "toy_spec.json").write_text(
            json.dumps(
                {
                    "key": cache_key(spec, mspec),
                    "task": asdict(spec),
                    "model": asdict(mspec),
                    "final_sft_loss": losses[-1],
                    "built_on": device,
                    "sft_losses": losses,
                },
                indent=1,
            )
        )
        if out.exists():
            shutil.rmtree(out)
        stage.rename(out)
    finally:
        if stage.exists():
            shutil.rmtree(stage, ignore_errors=True)
    return out


def built_with(path: Path) -> str | None:
    """The settings key a model folder was built with (None: no complete model there)."""
    meta = Path(path) / "toy_spec.json"
    if not (meta.exists() and (Path(path) / "model.safetensors").exists()):
        return None
    return json.loads(meta.read_text()).get("key")


def ensure_model(
    cache_dir: Path,
    spec: ToySpec,
    mspec: ModelSpec,
    progress: bool = True,
    rebuild: bool = False,
    model_dir: str = MODEL_DIR,
    shipped: Path = SHIPPED,
    device: str = "cpu",
) -> Path:
    """The model for these settings at CACHE/<model_dir>: kept when it was built with them, else
    copied from the committed warm start (`shipped`, recipe_bcr/miniature/resources/toy_model) when that was,
    else built (minutes; on `device`). `rebuild` builds it whatever is there."""
    path = Path(cache_dir).expanduser() / model_dir
    key = cache_key(spec, mspec)
    if rebuild or built_with(path) != key:
        if not rebuild and built_with(shipped) == key:
            logger.info("copying the committed toy model to %s", path)
            path.parent.mkdir(parents=True, exist_ok=True)
            stage = Path(tempfile.mkdtemp(prefix=".toy-model-", dir=path.parent))
            shutil.copytree(shipped, stage, dirs_exist_ok=True)
            if path.exists():
                shutil.rmtree(path)
            stage.rename(path)
        else:
            logger.info("building the toy model in %s", path)
            build_model(path, spec, mspec, progress=progress, device=device)
    return path


def provenance(path: Path = PAPER_TRAINED) -> dict:
    """A committed trained model's provenance.json: which paper run and settings made it."""
    meta = Path(path) / PROVENANCE
    if not meta.exists():
        raise FileNotFoundError(
            f"{meta}: no provenance beside the trained model; ship one with "
            "`python -m recipe_bcr paper out=DIR --ship RUN`"
        )
    try:
        return json.loads(meta.read_text())
    except json.JSONDecodeError as e:
        raise ValueError(
            f"{meta}: not valid JSON ({e}); ship the model again with `python -m recipe_bcr paper out=DIR --ship RUN`"
        ) from None
