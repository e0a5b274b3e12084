"""The runner: everything in flight at once, records written as samples finish, failures kept
out of the scores, progress bars off when asked; and 2 Ray replicas = 1 replica, record for record."""

import json

import pytest
from omegaconf import OmegaConf

from recipe_bcr.data.eval_tasks import build_tasks
from recipe_bcr.engines.base import Generation, Sampling
from recipe_bcr.eval.runner import FAILED_FILE, SAMPLES, run_tasks

REPO = __import__("pathlib").Path(__file__).resolve().parents[1]
PAPER = OmegaConf.to_container(OmegaConf.load(REPO / "hydra_configs/benchmarks/paper.yaml"))


@pytest.fixture(scope="module")
def tasks():
    return build_tasks({"AIME25": PAPER["AIME25"]}, [1, 2], seed=0, limit=4)  # 4 + 2 prompts


@pytest.fixture(scope="module")
def qwen(shared):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(shared / "tokenizers/qwen3")


class ScriptedEngine:
    """Finishes one request per poll (last submitted first, as a long sample would), reporting
    the given finish reasons; checks at every poll that the run folder holds all earlier results."""

    def __init__(self, run_dir, reasons=None, stop_after=None):
        self.run_dir, self.reasons, self.stop_after = run_dir, reasons or {}, stop_after
        self.submits, self.queue, self.returned = [], [], 0
        self.render_ids = lambda messages: [1, 2, 3]

    def submit(self, requests, sampling):
        self.submits.append([r.id for r in requests])
        self.queue += list(requests)

    def unfinished(self):
        return len(self.queue)

    def poll(self):
        path = self.run_dir / SAMPLES
        written = len(path.read_text().splitlines()) if path.exists() else 0
        failed = sum(1 for r in self.reasons.values() if r in ("abort", "error"))
        assert written >= self.returned - failed  # nothing finished is held back
        if self.stop_after is not None and self.returned == self.stop_after:
            raise KeyboardInterrupt
        r = self.queue.pop()
        self.returned += 1
        reason = self.reasons.get(r.id, "stop")
        return [
            (
                r.id,
                Generation(
                    "### Problem 1\nAnswer1: \\boxed{3}", (5, 6), reason, 2, "boom" if reason == "error" else None
                ),
            )
        ]


def _run(tasks, engine, run_dir, verifier, qwen, k=2, progress=False):
    return run_tasks(
        tasks, engine, Sampling(k=k), run_dir, verifier, qwen, thinking=False, markers=["wait"], progress=progress
    )


def _records(run_dir):
    return [json.loads(x) for x in (run_dir / SAMPLES).read_text().splitlines()]


def test_all_requests_in_flight_and_written_as_they_finish(tasks, verifier, qwen, tmp_path):
    engine = ScriptedEngine(tmp_path)
    assert _run(tasks, engine, tmp_path, verifier, qwen) == 12
    assert engine.submits == [list(range(12))]  # one submission: nothing waits for a chunk to end
    assert sorted(r["key"] for r in _records(tmp_path)) == sorted(t.key(j) for t in tasks for j in range(2))


def test_a_killed_run_keeps_what_finished_and_the_rerun_does_the_rest(tasks, verifier, qwen, tmp_path):
    with pytest.raises(KeyboardInterrupt):
        _run(tasks, ScriptedEngine(tmp_path, stop_after=5), tmp_path, verifier, qwen)
    assert len(_records(tmp_path)) == 5
    rest = ScriptedEngine(tmp_path)
    assert _run(tasks, rest, tmp_path, verifier, qwen) == 7
    assert len(rest.submits[0]) == 7 and len({r["key"] for r in _records(tmp_path)}) == 12


def test_failed_requests_are_not_scored_but_reported_and_retried(tasks, verifier, qwen, tmp_path, caplog):
    engine = ScriptedEngine(tmp_path, reasons={3: "error", 4: "abort", 5: "repetition", 6: "length"})
    assert _run(tasks, engine, tmp_path, verifier, qwen) == 10
    records = {r["key"]: r for r in _records(tmp_path)}
    key = lambda rid: tasks[rid // 2].key(rid % 2)  # noqa: E731
    assert key(3) not in records and key(4) not in records
    assert records[key(5)]["finish_reason"] == "repetition" and records[key(6)]["finish_reason"] == "length"
    failed = [json.loads(x) for x in (tmp_path / FAILED_FILE).read_text().splitlines()]
    assert {(f["key"], f["finish_reason"]) for f in failed} == {(key(3), "error"), (key(4), "abort")}
    assert "2 request(s) produced no model answer (abort 1, error 1)" in caplog.text
    retry = ScriptedEngine(tmp_path)
    assert _run(tasks, retry, tmp_path, verifier, qwen) == 2 and sorted(retry.submits[0]) == [3, 4]


@pytest.mark.parametrize("progress", [False, True])
def test_progress_bar_only_when_asked(tasks, verifier, qwen, tmp_path, capsys, progress):
    _run(tasks, ScriptedEngine(tmp_path), tmp_path, verifier, qwen, progress=progress)
    assert ("eval:" in capsys.readouterr().err) == progress


@pytest.mark.slow  # a Ray cluster
@pytest.mark.requires("ray")
def test_two_ray_replicas_give_the_records_of_one(tasks, verifier, qwen, shared, tmp_path):
    """Transformers engine, tiny random Qwen3: same seeds, same records, whichever replica runs a unit
    (units are dealt to the least-loaded replica, so both get work)."""
    import ray

    from recipe_bcr.engines.ray_pool import RayPool

    options = {
        "model": str(shared / "tiny_models/tiny-qwen3-config"),
        "tokenizer": str(shared / "tokenizers/qwen3"),
        "random_init": True,
        "batch_size": 2,
        "cpus_per_replica": 1,
    }
    sampling = Sampling(k=2, max_tokens=8, temperature=1.0, top_p=1.0)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        runs = {}
        for replicas in (1, 2):
            run_dir = tmp_path / f"r{replicas}"
            run_dir.mkdir()
            pool = RayPool("transformers", options, replicas)
            try:
                run_tasks(tasks, pool, sampling, run_dir, verifier, qwen, thinking=False, markers=[], progress=False)
                assert len(pool.served) == replicas and min(pool.served) > 0  # every replica did work
            finally:
                pool.close()
            runs[replicas] = sorted(_records(run_dir), key=lambda r: r["key"])
    finally:
        ray.shutdown()
    local = tmp_path / "local"
    local.mkdir()
    from recipe_bcr.engines import make_engine

    run_tasks(
        tasks,
        make_engine("transformers", options),
        sampling,
        local,
        verifier,
        qwen,
        thinking=False,
        markers=[],
        progress=False,
    )
    assert len(runs[1]) == 12
    assert runs[1] == runs[2] == sorted(_records(local), key=lambda r: r["key"])  # and the same as no Ray at all
    assert len({tuple(r["token_ids"]) for r in runs[1]}) > 1  # real, varied generations
