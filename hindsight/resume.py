"""Resuming an interrupted training (`train.save_every`, `rl.save_every`) from its last complete
checkpoint.

The Trainer writes a checkpoint's weights, optimiser, scheduler and RNG states first and its
`trainer_state.json` last, so a checkpoint with that file is whole; one cut short by a crash is
passed over. A checkpoint is only resumed by the training that wrote it: `resume_key.json`
beside the checkpoints records what fixes the optimisation (hyperparameters, data, base model,
processes), and a rerun with anything else is refused rather than silently continued.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from hindsight.errors import UserError

RESUME_KEY = "resume_key.json"
_CHECKPOINT = re.compile(r"^checkpoint-(\d+)$")
# Settings that do not change the optimisation: a rerun may change them and still resume.
_FREE = {"output_dir", "save_every", "logging_steps", "report_to", "malloc_mmap_threshold"}


class ResumeError(UserError):
    pass


def resume_key(hyperparameters: dict, data_sha256: str, base_model: dict, processes: int) -> dict:
    return {
        "hyperparameters": {k: v for k, v in sorted(hyperparameters.items()) if k not in _FREE},
        "data_sha256": data_sha256,
        "base_model": base_model,
        "processes": processes,
    }


def checkpoint_step(path: Path) -> int | None:
    """The optimiser step a `checkpoint-N` folder was saved at; None for any other name."""
    m = _CHECKPOINT.match(path.name)
    return int(m.group(1)) if m else None


def checkpoints(output_dir: str | Path, written_last: str = "trainer_state.json") -> list[Path]:
    """The whole checkpoints under `output_dir`, oldest first: those holding `written_last`, the
    file a checkpoint's writer writes after everything else."""
    found = [
        (step, path)
        for path in Path(output_dir).glob("checkpoint-*")
        if (step := checkpoint_step(path)) is not None and (path / written_last).is_file()
    ]
    return [path for _, path in sorted(found)]


def checkpoint_to_resume(
    output_dir: str | Path, key: dict, section: str = "train", written_last: str = "trainer_state.json"
) -> Path | None:
    """The last whole checkpoint of this training, or None when there is none; ResumeError when
    the checkpoints there belong to a training with other settings (`section`: the recipe section
    whose settings the key holds, for the message)."""
    found = checkpoints(output_dir, written_last)
    if not found:
        return None
    key_path = Path(output_dir) / RESUME_KEY
    saved = json.loads(key_path.read_text()) if key_path.is_file() else None
    if saved != key:
        differ = sorted(_differences(saved or {}, key, section)) if saved else ["(no resume_key.json)"]
        raise ResumeError(
            f"{output_dir} holds checkpoints of another training ({', '.join(differ)} differ): "
            f"remove {found[-1].parent}/checkpoint-* or set another {section}.output_dir"
        )
    return found[-1]


def _differences(saved: dict, key: dict, section: str) -> set[str]:
    changed = {name for name in key if name != "hyperparameters" and saved.get(name) != key[name]}
    before, now = saved.get("hyperparameters", {}), key["hyperparameters"]
    return changed | {f"{section}.{name}" for name in before.keys() | now.keys() if before.get(name) != now.get(name)}


def write_key(output_dir: str | Path, key: dict) -> None:
    Path(output_dir).mkdir(parents=True, exist_ok=True)
    (Path(output_dir) / RESUME_KEY).write_text(json.dumps(key, indent=1, sort_keys=True) + "\n")


def remove_checkpoints(output_dir: str | Path) -> None:
    """After a finished training: the saved student is the product; its checkpoints are not."""
    for path in Path(output_dir).glob("checkpoint-*"):
        if checkpoint_step(path) is not None:
            shutil.rmtree(path, ignore_errors=True)
    (Path(output_dir) / RESUME_KEY).unlink(missing_ok=True)
