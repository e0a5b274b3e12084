"""Checks of a composed `+recipe=bcr` config that run before Ray or any worker starts
(recipe_bcr.verl_ext.hydra_callbacks.Preflight): model paths, data files, attention settings and
their packages, whether torch can use the GPUs, whether Ray will see the GPUs (and nodes) the run
asks for, and whether the batch splits over them. Without them, a missing model surfaces as a
transformers "Repo id must be in the form ..." error inside a worker, a missing data file or an
uneven batch after the models load, a run that asks for more GPUs than there are waits on Ray's
scheduler with no message, and a sweep dies at the first job whose data is missing."""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from omegaconf import OmegaConf

from recipe_bcr.verl_ext.checks import attention_note, attention_problem, gpu_problem, missing, requirements
from recipe_bcr.verl_ext.memory import MODELS, candidates, estimate, first_fit
from recipe_bcr.verl_ext.platform_cpu import nvidia_gpus, visible_gpu_count
from recipe_bcr.verl_ext.resume import checkpoint_gb, plan, prune
from recipe_bcr.verl_ext.threads import OVERRIDE, train_threads, usable_cores

# the config keys that name a model or tokenizer folder (verl reads the tokenizer from model.path
# unless tokenizer_path is set)
MODEL_KEYS = (
    "bcr.model.path",
    "bcr.model.tokenizer",
    "actor_rollout_ref.model.path",
    "actor_rollout_ref.model.tokenizer_path",
)


class PreflightError(RuntimeError):
    """One line: what is wrong and the command or override that fixes it."""


def is_local(path: str) -> bool:
    """A folder, not a hub id: it exists here, or it cannot be one ("namespace/name": at most one '/', no
    leading '/', '.' or '~')."""
    return path.startswith(("/", ".", "~")) or path.count("/") > 1 or Path(path).expanduser().exists()


def _needs(key: str) -> tuple[str, ...]:
    """Files that make a folder what `key` asks for (any one of them)."""
    return ("tokenizer_config.json", "tokenizer.json") if "tokenizer" in key else ("config.json",)


def model_paths(cfg: Any) -> list[tuple[str, str]]:
    """(key, value) of every model or tokenizer the config names."""
    found = [(key, OmegaConf.select(cfg, key, default=None)) for key in MODEL_KEYS]
    return [(key, str(value)) for key, value in found if value]


def local_model_problem(key: str, value: str) -> str | None:
    """Why the local folder `value` of `key` is not usable (None: it is)."""
    path = Path(value).expanduser()
    if not path.exists():
        return (
            f"{key}={value}: no such folder ({path.absolute()}) -> fix: download or build the model there, or set "
            f"{key} to a model folder or a hub id (the toy model: `python -m recipe_bcr toy`, which writes "
            f"$BCR_CACHE/toy-qwen3)"
        )
    needs = _needs(key)
    if not path.is_dir() or not any((path / name).is_file() for name in needs):
        return f"{key}={value}: {path.absolute()} has no {' or '.join(needs)} -> fix: point {key} at the model's folder"
    return None


def check_model_paths(cfg: Any) -> list[str]:
    """Every local model path the config names exists and holds a model (config.json) or tokenizer.
    Returns the folders checked, once each."""
    checked = []
    for key, value in model_paths(cfg):
        if not is_local(value):
            continue
        problem = local_model_problem(key, value)
        if problem:
            raise PreflightError(problem)
        checked.append(str(Path(value).expanduser()))
    return list(dict.fromkeys(checked))


def hub_status(repo: str) -> str | None:
    """None if the hub id `repo` will load here (in the local cache, or found on the Hub); else "missing" (the
    Hub has no such model) or "unreachable: <why>"."""
    from huggingface_hub import model_info, try_to_load_from_cache
    from huggingface_hub.errors import GatedRepoError, HFValidationError, RepositoryNotFoundError

    try:
        if isinstance(try_to_load_from_cache(repo, "config.json"), str):
            return None
    except HFValidationError:
        return "missing"
    if os.environ.get("HF_HUB_OFFLINE", "0").lower() in ("1", "true", "yes"):
        return "unreachable: HF_HUB_OFFLINE is set and it is not in the local cache"
    try:
        model_info(repo, timeout=15)
    except GatedRepoError:
        return None  # it exists; the token decides, as for any gated model
    except RepositoryNotFoundError:
        return "missing"
    except Exception as e:  # noqa: BLE001 - no network, proxy, DNS, timeout: all say the same to the user
        return f"unreachable: {type(e).__name__}"
    return None


def hub_problem(key: str, value: str, status: str | None) -> str | None:
    """One line for a hub id that will not load (None: it will)."""
    if status is None:
        return None
    if status == "missing":
        return (
            f"{key}={value}: neither a folder here ({Path(value).absolute()}) nor a model on the Hugging Face Hub -> "
            f"fix: set {key} to the model's folder (e.g. the merge's --target_dir) or a hub id"
        )
    local = f"models/{value.split('/')[-1]}"
    return (
        f"{key}={value}: the Hugging Face Hub is {status} and the model is not in the local cache -> fix: where the "
        f"Hub is reachable, `huggingface-cli download {value} --local-dir {local}`, copy it here (every node) and "
        f"set {key}=$PWD/{local}"
    )


def check_hub_models(cfg: Any, status: Any = None) -> str:
    """Every hub id the config names loads here (the cache, or the Hub answers), or one line says why not and
    how to pass a local copy: else the failure comes later, inside the Ray workers of every node. `status`:
    hub_status (tests inject their own; there is no network in CI)."""
    status = status or hub_status
    ids = {value: key for key, value in reversed(model_paths(cfg)) if not is_local(value)}  # first key per id
    for value, key in ids.items():
        problem = hub_problem(key, value, status(value))
        if problem:
            raise PreflightError(problem)
    return f"{', '.join(ids)} found (cache or Hub)" if ids else "local folders only"


def check_imports(cfg: Any) -> str:
    """The actor's attention backend agrees with remove-padding, and what the config imports
    (recipe_bcr.verl_ext.checks.requirements, doctor's list) is installed."""
    problem = attention_problem(cfg)
    if problem:
        raise PreflightError(problem)
    device = "cpu" if cfg.trainer.device == "cpu" else "gpu"
    reqs = requirements(cfg, device)
    for req in missing(reqs):
        raise PreflightError(f"{'/'.join(req.modules)} is not installed ({req.why}) -> fix: {req.install}")
    return f"{attention_note(cfg)}; {', '.join('/'.join(r.modules) for r in reqs)} import"


def cluster_address(cfg: Any) -> str | None:
    """The running Ray cluster this run joins (+ray_kwargs.ray_init.address or RAY_ADDRESS), if any."""
    return OmegaConf.select(cfg, "ray_kwargs.ray_init.address", default=None) or os.environ.get("RAY_ADDRESS")


def check_device(cfg: Any) -> str:
    """bcr_device=gpu: torch can use this node's GPUs. Else a driver older than torch's CUDA build (or
    a CPU build of torch) surfaces much later as a CPU/FSDP error in a worker."""
    if cfg.trainer.device == "cpu":
        value = OmegaConf.select(cfg, OVERRIDE, default=None)
        if value is not None and not isinstance(value, str):  # Ray refuses a non-string env var, deep in ray.init
            raise PreflightError(
                f"{OVERRIDE}={value!r} is a {type(value).__name__}; Ray takes strings only -> fix: quote it, "
                f"{OVERRIDE}='\"{value}\"'"
            )
        try:
            threads = train_threads(value, usable_cores())
        except ValueError as e:
            raise PreflightError(str(e)) from None
        return f"bcr_device=cpu, training worker on {threads or 1} torch thread(s)"
    import torch

    problem = gpu_problem()
    if problem is None:  # named from nvidia-smi: no CUDA context in the driver process, which lives as long as the run
        listed = nvidia_gpus() or ()
        what = f": {listed[0].name}, driver {listed[0].driver}" if listed else ""
        return f"torch {torch.__version__} sees {torch.cuda.device_count()} GPU(s){what}"
    if cluster_address(cfg) and nvidia_gpus() is None:
        return "this node has no NVIDIA GPU: the cluster's nodes are checked by Ray when its workers start"
    cpu = (
        "bcr_device=cpu is no way out here: verl turns it back into cuda while the driver lists GPUs"
        if nvidia_gpus()
        else "a CPU run: bcr_device=cpu or +recipe=bcr_toy"
    )
    raise PreflightError(
        f"bcr_device=gpu, but torch cannot use a GPU here: {problem} ({cpu}; `python -m recipe_bcr doctor` checks "
        "the install)"
    )


def visible_gpus(cfg: Any) -> tuple[int, str]:
    """GPUs a local Ray start will offer, and whence: ray_init.num_gpus when set (the CPU preset's
    logical slots), else what Ray detects (CUDA_VISIBLE_DEVICES, else the node's NVIDIA GPUs)."""
    num_gpus = OmegaConf.select(cfg, "ray_kwargs.ray_init.num_gpus", default=None)
    if num_gpus is not None:
        return int(num_gpus), "ray_kwargs.ray_init.num_gpus"
    from ray._private.accelerators import get_accelerator_manager_for_resource

    manager = get_accelerator_manager_for_resource("GPU")
    ids = manager.get_current_process_visible_accelerator_ids()
    if ids is not None:
        return len(ids), "CUDA_VISIBLE_DEVICES"
    return manager.get_current_node_num_accelerators(), "detected by Ray"


# --- A run that joins a Ray cluster: before verl starts, one Ray task per node imports what verl's
# workers will import there (Ray's worker setup hook `recipe_bcr.verl_ext.plugin.worker_setup`, the
# reward `pkg://reward_fns.bcr`, the reward manager)
# and says what GPUs torch can use there. Without it, a node where bcr-recipe is not installed fails
# at its first worker with Ray's "Failed to execute the worker setup hook", and a node whose Ray
# clears CUDA_VISIBLE_DEVICES in actors without GPUs (Ray < 2.56) fails later still.

PROBED_MODULES = ("recipe_bcr.verl_ext.plugin", "reward_fns.bcr", "recipe_bcr.verl_ext.reward_manager")
PROBE_TIMEOUT_S = 300
VERSIONED = ("torch", "vllm", "verl")


def recipe_revision() -> str:
    """The recipe's commit (its git checkout), else its installed version."""
    import importlib.metadata
    import subprocess

    import recipe_bcr

    root = Path(recipe_bcr.__file__).resolve().parents[1]
    try:
        proc = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True
        )
    except OSError:
        proc = None
    if proc is not None and proc.returncode == 0 and (root / ".git").exists():
        return proc.stdout.strip()
    try:
        return importlib.metadata.version("bcr-recipe")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def node_versions() -> dict[str, str]:
    """What must match on every node: torch, vLLM, verl (installed versions) and the recipe's commit."""
    import importlib.metadata

    found = {}
    for name in VERSIONED:
        try:
            found[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            found[name] = "absent"
    return {**found, "bcr-recipe": recipe_revision()}


@dataclass
class NodeReport:
    host: str
    error: str | None  # why the recipe's modules (or vLLM) do not import there
    gpus: int = 0  # GPUs this node's processes may use (CUDA_VISIBLE_DEVICES, else nvidia-smi)
    gpu_problem: str | None = None  # why torch cannot use them (None: it can, or there are none)
    ray: str = ""
    versions: dict[str, str] = field(default_factory=dict)
    models: list[str] = field(default_factory=list)  # why a local model folder is not usable there


def probe_nodes(
    modules: tuple[str, ...] = PROBED_MODULES, models: tuple[tuple[str, str], ...] = ()
) -> list[NodeReport]:
    """One report per alive node of the Ray cluster this process is connected to; `models`: (key, folder) pairs
    each node must see (a folder only the head has fails in every other node's workers)."""
    import ray
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    def probe(names: tuple[str, ...], folders: tuple[tuple[str, str], ...]) -> dict[str, Any]:
        # defined here, so Ray ships it by value: it runs on a node that lacks recipe_bcr, and says so
        import importlib
        import socket

        report: dict[str, Any] = {"host": socket.gethostname(), "error": None, "ray": ray.__version__}
        try:
            for name in names:
                importlib.import_module(name)
        except Exception as e:  # noqa: BLE001 - the finding, reported for this node
            report["error"] = f"{type(e).__name__}: {e}"
            return report
        from recipe_bcr.verl_ext.checks import gpu_problem
        from recipe_bcr.verl_ext.platform_cpu import nvidia_gpus, visible_gpu_count
        from recipe_bcr.verl_ext.preflight import local_model_problem, node_versions

        report["gpus"] = visible_gpu_count()
        report["gpu_problem"] = gpu_problem() if nvidia_gpus() else None
        report["versions"] = node_versions()
        report["models"] = [p for key, value in folders if (p := local_model_problem(key, value))]
        return report

    task = ray.remote(num_cpus=0)(probe)
    nodes = [n for n in ray.nodes() if n.get("Alive")]
    refs = [
        task.options(scheduling_strategy=NodeAffinitySchedulingStrategy(n["NodeID"], soft=False)).remote(
            modules, models
        )
        for n in nodes
    ]
    return [NodeReport(**r) for r in ray.get(refs, timeout=PROBE_TIMEOUT_S)]


def verdict(
    reports: list[NodeReport], per_node: int, nodes: int, device: str, head: dict[str, str] | None = None
) -> str | None:
    """Why these nodes cannot run `nodes` x `per_node` GPUs of the recipe (None: they can); `head`: this node's
    node_versions, which every node must match."""
    broken = [f"{r.host}: {r.error}" for r in reports if r.error]
    if broken:
        return (
            f"the recipe (or vLLM) does not import on {len(broken)} of {len(reports)} node(s) ({'; '.join(broken)}) "
            "-> fix: install bcr-recipe on every node (docs/gpu.md), the same commit as here"
        )
    if head:
        differ = [
            f"{r.host}: " + ", ".join(f"{k} {r.versions.get(k)}" for k in head if r.versions.get(k) != head[k])
            for r in reports
            if any(r.versions.get(k) != head[k] for k in head)
        ]
        if differ:
            here = ", ".join(f"{k} {v}" for k, v in head.items())
            return (
                f"versions differ from this node's ({here}): {'; '.join(differ)} -> fix: install the same versions "
                "and check out the same commit on every node (docs/gpu.md, Two nodes)"
            )
    unseen = [f"{r.host}: {p.split(' -> ')[0]}" for r in reports for p in r.models]
    if unseen:
        return (
            f"a model folder is missing on some nodes ({'; '.join(unseen)}) -> fix: put it on storage every node "
            "sees, at the same path"
        )
    if device == "cpu":
        return None
    sick = [f"{r.host}: {r.gpu_problem}" for r in reports if r.gpu_problem]
    if sick:
        return f"torch cannot use the GPUs of {'; '.join(sick)}"
    enough = [r for r in reports if r.gpus >= per_node]
    if len(enough) < nodes:
        found = ", ".join(f"{r.host} {r.gpus}" for r in reports)
        return (
            f"trainer.nnodes={nodes} x trainer.n_gpus_per_node={per_node}, but only {len(enough)} node(s) have "
            f"{per_node} GPUs (GPUs per node: {found}) -> fix: start Ray on more nodes, or lower bcr.gpus / nnodes"
        )
    return None


def check_cluster(
    address: str,
    per_node: int,
    nodes: int,
    device: str,
    modules: tuple[str, ...] = PROBED_MODULES,
    models: tuple[tuple[str, str], ...] = (),
) -> str:
    """Connect to the cluster, probe every node, disconnect (verl then connects with its own
    runtime env). Returns one line per the nodes; raises RuntimeError with the verdict."""
    import ray

    ray.init(address=address, logging_level="ERROR", log_to_driver=False)
    try:
        reports = probe_nodes(modules, models)
    finally:
        ray.shutdown()
    head = node_versions()
    problem = verdict(reports, per_node, nodes, device, head)
    if problem:
        raise RuntimeError(problem)
    same = ", ".join(f"{k} {v}" for k, v in head.items())
    return (
        f"{len(reports)} node(s) import the recipe{' and vLLM' if 'vllm' in modules else ''}, with {same} as here: "
        + ", ".join(f"{r.host} ({r.gpus} GPU(s))" for r in reports)
    )


START_CLUSTER = (
    "start Ray on every node (`ray start --head --port=6379` on this one, `ray start "
    "--address=<this node's IP>:6379` on each other one; bcr-recipe installed on each) and add "
    "+ray_kwargs.ray_init.address=auto (or export RAY_ADDRESS=auto)"
)


def check_gpus(cfg: Any) -> str:
    """The run asks for no more GPUs than it will get. Several nodes need a running Ray cluster (a
    local Ray start is one node); a run that joins one has every node probed (probe_nodes:
    the recipe imports there, torch uses its GPUs, it has trainer.n_gpus_per_node of them: verl places
    that many on every node). Returns what was found."""
    per_node, nodes = int(cfg.trainer.n_gpus_per_node), int(cfg.trainer.nnodes)
    asked = f"trainer.n_gpus_per_node={per_node} x trainer.nnodes={nodes}"
    address = cluster_address(cfg)
    if address:
        local = visible_gpu_count() if cfg.trainer.device != "cpu" else 0
        if local and per_node > local:
            raise PreflightError(
                f"{asked}, but this node has {local} GPU(s) (nvidia-smi / CUDA_VISIBLE_DEVICES): verl "
                f"places {per_node} on every node -> fix: bcr.gpus={local}"
            )
        try:
            rollout = OmegaConf.select(cfg, "actor_rollout_ref.rollout.name", default=None)
            vllm = ("vllm",) if rollout == "vllm" and cfg.trainer.device != "cpu" else ()
            folders = tuple((k, v) for k, v in model_paths(cfg) if is_local(v))
            found = check_cluster(
                address, per_node, nodes, cfg.trainer.device, modules=PROBED_MODULES + vllm, models=folders
            )
        except ConnectionError as e:
            why = str(e).splitlines()[0]
            raise PreflightError(f"no Ray cluster at {address} ({why}) -> fix: {START_CLUSTER}") from None
        except RuntimeError as e:
            raise PreflightError(str(e)) from None
        return f"{asked} on the Ray cluster at {address}: {found}"
    if nodes > 1:
        raise PreflightError(
            f"{asked} needs a running Ray cluster, and without an address this run starts a "
            f"one-node Ray -> fix: {START_CLUSTER}"
        )
    visible, source = visible_gpus(cfg)
    if per_node <= visible:
        real = cfg.trainer.device != "cpu"  # the CPU preset's num_gpus are logical slots, not GPUs left idle
        idle = f"; {visible - per_node} left idle (bcr.gpus={visible} uses all)" if real and per_node < visible else ""
        return f"{per_node} GPU(s) asked, {visible} visible to Ray ({source}){idle}"
    fits = [f"bcr.gpus={visible}"] if visible else []
    fits += [] if cfg.trainer.device == "cpu" else ["bcr_device=cpu", "+recipe=bcr_toy"]
    raise PreflightError(
        f"this run asks for {per_node * nodes} GPU(s) ({asked}), a local Ray start sees {visible} ({source}) "
        "on 1 node; "
        f"overrides that fit: {' | '.join(fits)}"
    )


def check_memory(cfg: Any) -> str:
    """The composed run's memory per GPU (recipe_bcr.verl_ext.memory: arithmetic) against each GPU's
    memory.total, smallest first; where it does not fit, the preset that does. Else the first sign is an
    out-of-memory error minutes into the first step, or vLLM refusing to start for lack of free memory."""
    if cfg.trainer.device == "cpu":
        return "bcr_device=cpu: no GPU memory to check"
    found = candidates(cfg)
    run = found["as composed"]
    if run.model not in MODELS:
        return f"no estimate for bcr.model.name={run.model} (its shape is not in recipe_bcr/verl_ext/memory.py MODELS)"
    sizes = sorted({(g.memory_mib, g.name) for g in nvidia_gpus() or () if g.memory_mib})
    if not sizes:
        e = estimate(run, 80.0)
        return f"no memory.total listed here (nvidia-smi); update {e.update:.1f} GiB per GPU by arithmetic, not checked"
    lines = []
    for mib, name in sizes:
        memory = mib / 1024
        e = estimate(run, memory)
        problem = e.problem(memory)
        where = f"{name} ({memory:.1f} GiB)"
        if problem:
            if not OmegaConf.select(cfg, "bcr.check_memory", default=True):
                lines.append(f"{where}: {problem}; bcr.check_memory=false, going on")
                continue
            fit = first_fit(found, memory)
            fix = fit or (
                f"no preset fits: more GPUs (the training state is {e.state:.1f} GiB per GPU on {run.gpus}, sharded "
                "over them), a larger GPU, or a smaller budget (bcr.n, bcr_budget@bcr)"
            )
            raise PreflightError(
                f"per GPU on {where}, by arithmetic (docs/gpu.md, Memory): {problem} -> fix: {fix} "
                "(bcr.check_memory=false runs it anyway)"
            )
        lines.append(
            f"{where}: rollout {e.rollout:.1f} GiB (training {e.resident:.1f} + vLLM {e.vllm:.1f}), update "
            f"{e.update:.1f} GiB: fits"
        )
    return "; ".join(lines) + " (arithmetic, docs/gpu.md Memory)"


def check_batch(cfg: Any) -> str:
    """One update (ppo_mini_batch_size prompts x rollout.n completions) splits into GPUs x completions
    per device (bcr.completions_per_device) x whole accumulation steps, and a step's batch into the GPUs.
    verl derives the accumulation steps from these; when they do not divide, verl stops in a worker
    after the models load. Returns the split."""
    actor, n = cfg.actor_rollout_ref.actor, int(cfg.actor_rollout_ref.rollout.n)
    if actor.get("use_dynamic_bsz"):
        return "dynamic batch size (token budget per GPU): not checked"
    world = int(cfg.trainer.n_gpus_per_node) * int(cfg.trainer.nnodes)
    update, micro = int(actor.ppo_mini_batch_size) * n, int(actor.ppo_micro_batch_size_per_gpu)
    step = int(cfg.data.train_batch_size) * n
    what = (
        f"an update of {update} completions (actor_rollout_ref.actor.ppo_mini_batch_size="
        f"{actor.ppo_mini_batch_size} prompts x rollout.n={n})"
    )
    if step % world or update % world:
        raise PreflightError(
            f"{what} and a step of {step} (data.train_batch_size x rollout.n) do not split evenly "
            f"into {world} GPU(s) -> fix: bcr.gpus=<a divisor of {math.gcd(step, update)}>"
        )
    if (update // world) % micro:
        raise PreflightError(
            f"{what} gives {update // world} per GPU on {world} GPU(s), not a multiple of "
            f"bcr.completions_per_device={micro} -> fix: bcr.completions_per_device=<a divisor of "
            f"{update // world}>"
        )
    return (
        f"update of {update} completions = {world} GPU(s) x {micro} per device x {update // world // micro} "
        "accumulation step(s)"
    )


def check_anchor(cfg: Any) -> str:
    """`bcr.anchor_on_actor` takes the PPO anchor from the update's own forward, which is the old policy only
    when the update is on-policy: one mini-batch a step, one epoch, on the CPU engine that implements it."""
    if not OmegaConf.select(cfg, "bcr.anchor_on_actor", default=False):
        return "verl's"
    actor = cfg.actor_rollout_ref.actor
    wrong = [
        f"{k}={v} (needs {want})"
        for k, v, want in (
            ("trainer.device", cfg.trainer.device, "cpu"),
            ("actor_rollout_ref.actor.ppo_epochs", actor.ppo_epochs, 1),
            ("actor_rollout_ref.actor.ppo_mini_batch_size", actor.ppo_mini_batch_size, cfg.data.train_batch_size),
            (
                "algorithm.rollout_correction.bypass_mode",
                OmegaConf.select(cfg, "algorithm.rollout_correction.bypass_mode", default=False),
                True,
            ),
        )
        if v != want
    ]
    if wrong:
        raise PreflightError(
            f"bcr.anchor_on_actor=true takes the PPO anchor from the update's own forward, which is the old policy "
            f"only on-policy on the CPU engine, but {'; '.join(wrong)} -> fix: bcr.anchor_on_actor=false"
        )
    return "the update's own forward (on-policy)"


def data_files(cfg: Any) -> list[tuple[str, str]]:
    """(key, path) of every local training and validation file the config names (remote URIs skipped)."""
    found = []
    for key in ("data.train_files", "data.val_files"):
        value = OmegaConf.select(cfg, key, default=None)
        values = [value] if isinstance(value, str) else list(value or [])
        found += [(key, str(v)) for v in values if "://" not in str(v)]
    return found


def _make_command(paths: list[Path], toy: bool) -> str:
    """The command that writes these missing files: the toy data, the training groups or the eval sets."""
    folder = paths[0].parent
    ns = sorted({int(m.group(1)) for p in paths if (m := re.search(r"_n(\d+)\.parquet$", p.name))})
    if toy:
        return "; ".join(f"python -m recipe_bcr toy out={folder} data.n={n}" for n in ns)
    if all(p.name.startswith(("train_n", "val_n")) for p in paths):
        return f"python data_prep/build_groups.py n=[{','.join(map(str, ns))}] out={folder}"
    return f"python data_prep/build_eval_sets.py n=[{','.join(map(str, ns))}] out={folder}"


def check_data(cfgs: list[Any]) -> str:
    """The training and validation files of every job exist (all of a sweep's jobs are checked before
    its first starts), or one error names each missing file and the command per folder that writes them."""
    missing: dict[tuple[Path, bool], list[Path]] = {}
    count = 0
    for cfg in cfgs:
        toy = OmegaConf.select(cfg, "bcr.model.name", default=None) == "tiny-qwen3"
        for _, value in data_files(cfg):
            count += 1
            path = Path(value).expanduser()
            if not path.exists():
                missing.setdefault((path.parent, toy), [])
                if path not in missing[(path.parent, toy)]:
                    missing[(path.parent, toy)].append(path)
    if missing:
        names = ", ".join(str(p) for paths in missing.values() for p in paths)
        fixes = " && ".join(_make_command(paths, toy) for (_, toy), paths in missing.items())
        jobs = f" (over the {len(cfgs)} jobs of this sweep)" if len(cfgs) > 1 else ""
        raise PreflightError(f"data files missing{jobs}: {names} -> fix: {fixes}")
    return f"{count} data file(s) found" + (f" over {len(cfgs)} jobs" if len(cfgs) > 1 else "")


def train_rows(cfg: Any) -> int | None:
    """Rows of the training files (parquet metadata; None if one is missing or remote)."""
    import pyarrow.parquet as pq

    value = cfg.data.train_files
    paths = [Path(str(v)).expanduser() for v in ([value] if isinstance(value, str) else list(value))]
    if not all(p.is_file() for p in paths):
        return None
    return sum(pq.ParquetFile(p).metadata.num_rows for p in paths)


def training_steps(cfg: Any) -> tuple[int | None, str]:
    """verl's total_training_steps (trainer_base: rows // train_batch_size x total_epochs, drop_last), and how."""
    if cfg.trainer.total_training_steps is not None:
        return int(cfg.trainer.total_training_steps), "trainer.total_training_steps"
    rows = train_rows(cfg)
    if rows is None:
        return None, "training files not read"
    batch, epochs = int(cfg.data.train_batch_size), int(cfg.trainer.total_epochs)
    return rows // batch * epochs, f"{rows} groups // {batch} x {epochs} epochs; fewer if verl filters long prompts"


def check_schedule(cfg: Any) -> str:
    """The learning-rate schedule verl will build from the composed optimizer config and the data."""
    optim = cfg.actor_rollout_ref.actor.optim
    steps, how = training_steps(cfg)
    kind = str(optim.lr_scheduler_type)
    if steps is not None and int(optim.lr_warmup_steps) < 0:
        warmup = int(float(optim.lr_warmup_steps_ratio) * steps)
    else:
        warmup = max(int(optim.lr_warmup_steps), 0)
    shape = f"cosine to {float(optim.lr) * float(optim.min_lr_ratio):g}" if kind == "cosine" else kind
    warm = f"{warmup} warmup step(s)" if warmup else "no warmup"
    return f"lr {float(optim.lr):g}, {shape}, {warm}, over {steps if steps is not None else '?'} steps ({how})"


def check_resume(cfg: Any) -> str:
    """What the run resumes from (recipe_bcr.verl_ext.resume), refusing a checkpoint of another world size, and
    stale checkpoints (older than the newest trainer.max_actor_ckpt_to_keep) pruned: verl forgets them on restart."""
    found = plan(cfg)
    world = int(cfg.trainer.n_gpus_per_node) * int(cfg.trainer.nnodes)
    if found.step is not None and found.world_size and found.world_size != world:
        nodes = int(cfg.trainer.nnodes)
        fit = (
            f"bcr.gpus={found.world_size // nodes}"
            if found.world_size % nodes == 0
            else f"bcr.gpus={found.world_size} trainer.nnodes=1"
        )
        raise PreflightError(
            f"global_step_{found.step} in {found.folder} was saved on {found.world_size} GPU(s), this run has "
            f"{world} (FSDP shards load only on the world size that saved them) -> fix: {fit}, or start fresh with "
            "trainer.resume_mode=disable or another trainer.default_local_dir"
        )
    if found.step is not None and str(cfg.trainer.resume_mode) == "auto":
        found = replace(found, pruned=prune(found.folder, cfg.trainer.max_actor_ckpt_to_keep))
    name = str(OmegaConf.select(cfg, "bcr.model.name", default=""))
    size = f"; ~{checkpoint_gb(name):.0f} GB a checkpoint (arithmetic)" if name in MODELS else ""
    return found.line() + size


def preflight(cfg: Any) -> list[str]:
    """All checks, cheapest first (the pruning one last); raises PreflightError on the first failure. Returns one
    line per check."""
    return [
        f"models: {', '.join(check_model_paths(cfg)) or 'hub ids only'}",
        f"device: {check_device(cfg)}",
        f"data: {check_data([cfg])}",
        f"schedule: {check_schedule(cfg)}",
        f"attention and imports: {check_imports(cfg)}",
        f"gpus: {check_gpus(cfg)}",
        f"memory: {check_memory(cfg)}",
        f"batch: {check_batch(cfg)}",
        f"hub models: {check_hub_models(cfg)}",  # after the cheap checks: it may ask the Hub
        f"PPO anchor: {check_anchor(cfg)}",
        f"checkpoints: {check_resume(cfg)}",  # last: it prunes, which only a run that starts should do
    ]
