"""The README's first quick-start command: the offline demo writes every artefact it announces."""

import subprocess
import sys


def test_demo_runs_offline(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "recipe_bcr", "demo", "--out", str(tmp_path / "d")],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = tmp_path / "d"
    assert (out / "data" / "train_n3.parquet").exists() and (out / "data" / "manifest.json").exists()
    assert (out / "eval_sets" / "AMC23_n3.parquet").exists()
    assert (out / "eval_run" / "table.md").read_text().count("| demo-replay |") == 3
    assert len(list((out / "eval_run" / "plots").glob("*.png"))) == 3
    assert "all right, in format         score 3.00" in proc.stdout
    assert "template copied              score 0.00" in proc.stdout
