"""What an rl run leaves to read: the sweep's summary of its dev curves and the rewards figure."""

import json
from pathlib import Path

import pytest

from tests.helpers import load_file_module

ROOT = Path(__file__).resolve().parents[1]


def load_sweep():
    return load_file_module("rl_sweep", ROOT / "scripts/rl_sweep.py")


def write_rewards(folder: Path, dev: list[tuple[int, float]]) -> Path:
    folder.mkdir(parents=True)
    rows = []
    for step, reward in dev:
        rows.append(
            {"step": step, "split": "dev", "reward": reward, "episodes": 3, "ndcg10": reward, "exposed_gain": 0.1}
            | {"malformed": 0.0}
        )
        if step:
            rows.append({"step": step, "split": "train", "reward": 0.2, "episodes": 4, "distinct": 0.5})
            rows.append({"step": step, "split": "signal", "frac_reward_zero_std": 0.25, "reward_std": 0.1, "kl": 0.01})
    path = folder / "rewards.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def test_the_sweep_grid_is_every_combination_in_order():
    sweep = load_sweep()
    combos = sweep.combinations(["rl.learning_rate=1e-4,3e-4", "rl.targets_per_step=2,4"])
    assert combos == [
        {"rl.learning_rate": "1e-4", "rl.targets_per_step": "2"},
        {"rl.learning_rate": "1e-4", "rl.targets_per_step": "4"},
        {"rl.learning_rate": "3e-4", "rl.targets_per_step": "2"},
        {"rl.learning_rate": "3e-4", "rl.targets_per_step": "4"},
    ]
    assert sweep.run_name(combos[1]) == "learning_rate-1e-4_targets_per_step-4"
    with pytest.raises(SystemExit, match="section.key=value"):
        sweep.combinations(["rl.learning_rate"])


def test_the_sweep_summary_takes_the_first_best_dev_scoring(tmp_path):
    sweep = load_sweep()
    write_rewards(tmp_path / "run", [(0, 0.10), (10, 0.14), (20, 0.14), (30, 0.12)])
    row = sweep.summary(tmp_path / "run")
    assert row["dev_best"] == 0.14 and row["dev_best_step"] == 10
    assert row["dev_gain"] == pytest.approx(0.04)
    assert row["frac_reward_zero_std"] == 0.25 and row["last_kl"] == 0.01
    assert [point["step"] for point in row["dev_curve"]] == [0, 10, 20, 30]


def test_the_rewards_figure_is_drawn_from_train_dev_and_signal_rows(tmp_path):
    pytest.importorskip("matplotlib")
    from hindsight.rl.plot import plot_rewards

    rewards = write_rewards(tmp_path / "run", [(0, 0.1), (1, 0.2), (2, 0.15)])
    out = plot_rewards(rewards, tmp_path / "rewards.png")
    assert out.stat().st_size > 10_000


def test_collected_runs_are_tabled_with_their_settings_and_whether_they_finished(tmp_path):
    sweep = load_sweep()
    write_rewards(tmp_path / "a", [(0, 0.10), (10, 0.14), (20, 0.12)])
    (tmp_path / "a" / "sweep_settings.json").write_text(json.dumps({"overrides": ["rl.learning_rate=1e-4"]}))
    (tmp_path / "a" / "train_manifest.json").write_text("{}")
    write_rewards(tmp_path / "b", [(0, 0.10), (10, 0.05)])
    rows = [sweep.summary(tmp_path / "a"), sweep.summary(tmp_path / "b")]
    table = sweep.markdown(rows).splitlines()
    assert table[2] == "| a | lr 1e-4 | 0.1000 → 0.1400 (10) → 0.1200 (20) | 0.0% | 25% | yes |"
    assert table[3].startswith("| b |  | 0.1000 → 0.1000 (0) → 0.0500 (10) |") and table[3].endswith("| stopped |")
    assert sweep.short_setting("rl.reward={ndcg10: 1.0, malformed: -0.5}") == "reward +1·ndcg10 −0.5·malformed"


def test_runs_with_other_rewards_are_judged_on_one_at_the_step_each_chose(tmp_path):
    sweep = load_sweep()
    write_rewards(tmp_path / "a", [(0, 0.10), (10, 0.14), (20, 0.12)])
    row = sweep.summary(tmp_path / "a", {"ndcg10": 1.0, "exposed_gain": 0.5})
    assert row["judged_start"] == pytest.approx(0.15) and row["judged_best"] == pytest.approx(0.19)
    assert sweep.markdown([row]).splitlines()[2].endswith("| 0.1500 → 0.1900 |")
    with pytest.raises(SystemExit, match="no selected_gain to judge by"):
        sweep.summary(tmp_path / "a", {"selected_gain": 1.0})
    write_rewards(tmp_path / "other" / "a", [(0, 0.10), (10, 0.12)])
    out = tmp_path / "summary.json"
    sweep.main(
        [
            "--collect",
            str(tmp_path / "a"),
            str(tmp_path / "other" / "a"),
            "--judge",
            "{ndcg10: 1.0}",
            "--json",
            str(out),
        ]
    )
    summary = json.loads(out.read_text())
    assert [row["name"] for row in summary["runs"]] == [f"{tmp_path.name}/a", "other/a"]
    assert summary["judge"] == {"ndcg10": 1.0}


def test_a_resumed_sweep_run_keeps_the_log_of_its_first_part(tmp_path, monkeypatch):
    sweep = load_sweep()
    # A stand-in for train/rl.py that prints the overrides it was given.
    fake_root = tmp_path / "root"
    (fake_root / "train").mkdir(parents=True)
    (fake_root / "train/rl.py").write_text("import sys\nprint('trained with', *sys.argv[2:])\n")
    monkeypatch.setattr(sweep, "ROOT", fake_root)
    folder = tmp_path / "sweep/steps-120"
    (folder / "checkpoint-10").mkdir(parents=True)
    (folder / "train.log").write_text("first part, stopped at step 12\n")
    sweep.train("recipe.yaml", {"rl.steps": "120"}, [], folder)
    log = (folder / "train.log").read_text()
    assert log.startswith("first part, stopped at step 12\n")
    assert "resumed" in log and "trained with --set rl.steps=120" in log
    assert json.loads((folder / "sweep_seconds.json").read_text())["resumed"] is True
