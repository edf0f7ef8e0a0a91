"""The student as it was at each earlier epoch's end (`train.save_epochs`).

Under a constant learning rate the first N epochs of a longer run are the N-epoch run (the data
order of an epoch does not depend on how many follow), so one training gives every epoch count to
choose from on dev. Each `<output_dir>/epoch-N/` is a student folder like the run's own: its
adapter (or model) and a train_manifest.json, so `eval/run.py --student <output_dir>/epoch-N`
plays it. The last epoch's student is the run's own output.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from hindsight.log import get_logger
from hindsight.stages import StudentManifest

logger = get_logger(__name__)

EPOCH_FOLDER = re.compile(r"^epoch-(\d+)$")


def epoch_folder(output_dir: str | Path, epoch: int) -> Path:
    """Where the student after `epoch` epochs is kept (the name EPOCH_FOLDER reads back)."""
    return Path(output_dir) / f"epoch-{epoch}"


def epoch_folders(output_dir: str | Path) -> dict[int, Path]:
    """{epoch: its folder} of the epoch students under output_dir."""
    found = {}
    for path in Path(output_dir).glob("epoch-*"):
        match = EPOCH_FOLDER.match(path.name)
        if match and path.is_dir():
            found[int(match.group(1))] = path
    return dict(sorted(found.items()))


def remove_epoch_folders(output_dir: str | Path) -> None:
    """A training that starts afresh drops the epoch students of an earlier run in its folder."""
    for path in epoch_folders(output_dir).values():
        shutil.rmtree(path)


def epoch_saver(trainer, output_dir: str | Path, weights_folder: str):
    """A TrainerCallback that saves the student at the end of every epoch but the last, through
    trainer.save_model (which gathers sharded weights and writes on the main process only)."""
    from transformers import TrainerCallback

    class SaveEachEpoch(TrainerCallback):
        def on_epoch_end(self, args, state, control, **kwargs):
            if state.epoch >= args.num_train_epochs - 1e-6:
                return  # the run's own output is this epoch's student
            epoch = round(state.epoch)
            folder = epoch_folder(output_dir, epoch) / weights_folder
            trainer.save_model(str(folder))
            logger.info(f"train.save_epochs: the student after epoch {epoch} is in {folder}")

    return SaveEachEpoch()


def write_epoch_manifests(output_dir: str | Path, manifest: dict, log_history: list[dict], steps_of) -> list[Path]:
    """A train_manifest.json in each epoch folder: the run's, with the epoch's output, steps and losses.

    Args:
        manifest: the run's own manifest.
        log_history: the trainer's log entries (each loss line carries its step).
        steps_of: epoch → the optimiser steps the run had taken at that epoch's end.
    """
    written = []
    for epoch, folder in epoch_folders(output_dir).items():
        steps = steps_of(epoch)
        losses = [entry["loss"] for entry in log_history if "loss" in entry and entry.get("step", 0) <= steps]
        record = {
            **manifest,
            "output": str(folder / Path(manifest["output"]).name),
            "hyperparameters": {**manifest["hyperparameters"], "epochs": epoch},
            "losses": losses,
            "first_loss": losses[0] if losses else None,
            "final_loss": losses[-1] if losses else None,
            "train_loss": None,
            "steps": steps,
            "timing": None,
            "epoch_of": {"run": str(output_dir), "epochs": manifest["hyperparameters"]["epochs"]},
        }
        written.append(StudentManifest.write(folder, record))
    return written
