"""LoRA SFT of a student on the selected demonstrations, loss on action tokens only.

    accelerate launch train/sft.py recipes/qwen_lora.yaml
    accelerate launch --config_file recipes/accelerate/ddp.yaml train/sft.py recipes/qwen_lora.yaml --set train.epochs=2

One process per GPU (accelerate/torchrun variables give rank and world size, multi-node
included). Labels are built here (hindsight/masking.py) so TRL trains on them as they are.
Writes <output_dir>/adapter (PEFT; loadable by PeftModel.from_pretrained and vLLM
--lora-modules) and <output_dir>/train_manifest.json.
"""

from __future__ import annotations

import math
import sys
from dataclasses import asdict
from pathlib import Path

from hindsight.allocator import pin_mmap_threshold
from hindsight.errors import UserError
from hindsight.jsonl import sha256_file
from hindsight.log import get_logger
from hindsight.models.gguf import model_provenance, resolve_model
from hindsight.policy.chat import use_chat_template
from hindsight.provenance import git_commit, software_versions
from hindsight.recipe import recipe_command
from hindsight.resume import checkpoint_step, checkpoint_to_resume, remove_checkpoints, resume_key, write_key
from hindsight.stages import (
    STUDENT_MANIFEST,
    DistillOutput,
    StudentManifest,
    read_sft_set,
    student_record,
)
from hindsight.train.config import TrainConfig
from hindsight.train.data import check_packing, encode_rows
from hindsight.train.epochs import epoch_saver, remove_epoch_folders, write_epoch_manifests
from hindsight.train.freeze import freeze_token_rows, frozen_rows
from hindsight.trainer_args import (
    batch_sizes,
    check_sharding,
    checkpointing_flag,
    precision_flags,
    quiet_upstream_deprecations,
    repeated_examples,
    without_accelerator,
)

logger = get_logger(__name__)


def data_path(cfg: TrainConfig, recipe) -> Path:
    if cfg.data:
        return Path(cfg.data)
    return DistillOutput.of_recipe(recipe).sft_set


def load_tokenizer(cfg: TrainConfig):
    from transformers import AutoTokenizer

    try:
        tokenizer = AutoTokenizer.from_pretrained(resolve_model(cfg.base_model), revision=cfg.revision)
    except (OSError, ValueError) as exc:
        raise FileNotFoundError(
            f"train.base_model {cfg.base_model!r} is neither a model folder here nor a hub id "
            f"that could be loaded ({str(exc).splitlines()[0]})"
        ) from None
    use_chat_template(tokenizer, cfg.chat_template, "train.chat_template")
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    return tokenizer


def load_examples(cfg: TrainConfig, recipe, tokenizer):
    """The SFT set read and encoded: (its path, the examples, the encoding summary)."""
    source = data_path(cfg, recipe)
    rows = read_sft_set(source)[: cfg.max_examples or None]
    examples, report = encode_rows(
        rows, tokenizer, cfg.max_length, cfg.max_drop_share, cfg.enable_thinking, source=str(source)
    )
    summary = report.summary()
    logger.info(
        f"SFT set {source}: {summary['rows']} rows → {summary['examples']} examples, "
        f"{summary['dropped_rows_too_long']} rows dropped as longer than {cfg.max_length}; tokens "
        f"p50 {summary['tokens']['p50']}, p95 {summary['tokens']['p95']}, max {summary['tokens']['max']}; "
        f"{summary['trained_tokens']} trained tokens"
    )
    return source, examples, summary


def load_model(cfg: TrainConfig, tokenizer):
    """The base model, with the rows of train.frozen_tokens kept as they are: (model, frozen rows)."""
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(resolve_model(cfg.base_model), revision=cfg.revision, dtype="auto")
    frozen = []
    if cfg.frozen_tokens:
        frozen = frozen_rows(tokenizer, cfg.frozen_tokens)
        if not frozen:
            raise UserError(
                f"train.frozen_tokens {cfg.frozen_tokens!r} matches no token of {cfg.base_model}'s tokenizer"
            )
        freeze_token_rows(model, frozen)
        logger.info(f"train.frozen_tokens: {len(frozen)} token embeddings kept as they are")
    return model, frozen


def optimizer_steps(examples: int, per_device: int, world_size: int, accumulation: int, epochs: float) -> int:
    """The optimiser steps of a training, as the Trainer counts them: each process sees
    ceil(examples / (per_device × world_size)) batches an epoch, a step every `accumulation` of them."""
    batches = math.ceil(examples / (per_device * world_size))
    return max(1, math.ceil(math.ceil(batches / accumulation) * epochs))


def epoch_steps(cfg: TrainConfig, trainer, examples: int):
    """epoch → the optimiser steps taken by that epoch's end."""
    world = trainer.args.world_size
    return lambda epoch: optimizer_steps(
        examples, cfg.per_device_batch_size, world, cfg.gradient_accumulation_steps, epoch
    )


def warmup_steps(cfg: TrainConfig, examples: int, world_size: int) -> int:
    """train.warmup_ratio as a whole number of steps, which every transformers version reads as
    steps (a float below 1 is a share of the steps only in recent ones)."""
    if cfg.warmup_ratio <= 0:
        return 0
    steps = optimizer_steps(
        examples, cfg.per_device_batch_size, world_size, cfg.gradient_accumulation_steps, cfg.epochs
    )
    return math.ceil(cfg.warmup_ratio * steps)


def trainer_arguments(cfg: TrainConfig, examples: int):
    from trl import SFTConfig

    args = SFTConfig(
        output_dir=cfg.output_dir,
        num_train_epochs=cfg.epochs,
        learning_rate=cfg.learning_rate,
        lr_scheduler_type=cfg.lr_scheduler,
        warmup_steps=0,
        per_device_train_batch_size=cfg.per_device_batch_size,
        gradient_accumulation_steps=cfg.gradient_accumulation_steps,
        max_length=cfg.max_length,
        padding_free=cfg.packing,
        **checkpointing_flag(SFTConfig, cfg.gradient_checkpointing),
        optim=cfg.optimizer,
        weight_decay=cfg.weight_decay,
        seed=cfg.seed,
        logging_steps=cfg.logging_steps,
        report_to=[] if cfg.report_to == "none" else [cfg.report_to],
        **(
            {"save_strategy": "steps", "save_steps": cfg.save_every, "save_total_limit": 2}
            if cfg.save_every
            else {"save_strategy": "no"}
        ),
        dataset_kwargs={"skip_prepare_dataset": True},
        **precision_flags(cfg.precision),
        **without_accelerator(),
    )
    args.warmup_steps = warmup_steps(cfg, examples, args.world_size)  # the world size is known only now
    return args


def warn_repeated_examples(cfg: TrainConfig, trainer, examples: int) -> int:
    """How many examples each epoch's last step repeats on this many processes; said once."""
    repeated = repeated_examples(
        examples, cfg.per_device_batch_size, trainer.args.world_size, trainer.accelerator.even_batches
    )
    if repeated:
        logger.info(
            f"{examples} examples on {trainer.args.world_size} processes × {cfg.per_device_batch_size} a "
            f"device: each epoch's last step repeats {repeated} example(s) from the epoch's start (accelerate "
            "gives every process a full batch), so this run is not one process's with more accumulation; "
            "an example count divisible by processes × per-device batch makes it so"
        )
    return repeated


def resume_point(cfg: TrainConfig, trainer, data_sha256: str, provenance: dict) -> Path | None:
    """The checkpoint this training continues from (train.save_every), if one of the same settings exists."""
    if not cfg.save_every:
        return None
    key = resume_key(asdict(cfg), data_sha256, {"path": cfg.base_model, **provenance}, trainer.args.world_size)
    checkpoint = checkpoint_to_resume(cfg.output_dir, key)
    if checkpoint:
        logger.info(f"resuming from {checkpoint} (train.save_every)")
    if trainer.is_world_process_zero():
        write_key(cfg.output_dir, key)
    return checkpoint


def timing(metrics: dict, steps: int, checkpoint: Path | None) -> dict:
    """This invocation's wall time and the optimiser steps it ran (a resumed run: those after its checkpoint)."""
    import torch

    steps_run = steps - (checkpoint_step(checkpoint) if checkpoint else 0)
    seconds = metrics.get("train_runtime")
    return {
        "seconds": round(seconds, 1) if seconds is not None else None,
        "steps_run": steps_run,
        "seconds_per_step": round(seconds / steps_run, 2) if seconds and steps_run else None,
        "torch_threads": torch.get_num_threads(),
    }


def train(recipe, cfg: TrainConfig, callbacks: tuple = ()) -> dict:
    """Train and save the student; its manifest.

    Args:
        recipe: the loaded recipe (its data section finds the SFT set when train.data is unset).
        cfg: the recipe's train section.
        callbacks: transformers TrainerCallbacks added to the trainer.
    """
    from datasets import Dataset
    from trl import SFTTrainer

    quiet_upstream_deprecations()
    pin_mmap_threshold(cfg.malloc_mmap_threshold)
    tokenizer = load_tokenizer(cfg)
    source, examples, summary = load_examples(cfg, recipe, tokenizer)
    dataset = Dataset.from_list([{"input_ids": e.input_ids, "labels": e.labels} for e in examples])
    model, frozen = load_model(cfg, tokenizer)
    lora = cfg.lora_settings()
    if cfg.packing:
        check_packing(model, examples)
    trainer = SFTTrainer(
        model=model,
        args=trainer_arguments(cfg, len(dataset)),
        train_dataset=dataset,
        processing_class=tokenizer,
        peft_config=lora.peft_config() if lora else None,
        callbacks=list(callbacks),
    )
    distributed_type = str(trainer.accelerator.distributed_type).rpartition(".")[2]
    check_sharding(distributed_type)
    repeated = warn_repeated_examples(cfg, trainer, len(dataset))
    data_sha256, provenance = sha256_file(source), model_provenance(cfg.base_model)
    checkpoint = resume_point(cfg, trainer, data_sha256, provenance)
    weights_folder = "adapter" if lora else "model"
    if trainer.is_world_process_zero() and not checkpoint:
        remove_epoch_folders(cfg.output_dir)
    if cfg.save_epochs:
        trainer.add_callback(epoch_saver(trainer, cfg.output_dir, weights_folder))
    commit = git_commit()  # the code that trains: a checkout pulled during a long run moves HEAD
    result = trainer.train(resume_from_checkpoint=str(checkpoint) if checkpoint else None)
    adapter_dir = Path(cfg.output_dir) / weights_folder
    trainer.save_model(str(adapter_dir))
    losses = [entry["loss"] for entry in trainer.state.log_history if "loss" in entry]
    manifest = {
        **student_record(cfg.base_model, cfg.revision, provenance, adapter_dir, tokenizer, cfg.enable_thinking),
        "data": {"path": str(source), "sha256": data_sha256, **summary},
        "hyperparameters": {**asdict(cfg), "lora": asdict(lora) if lora else None},
        "losses": losses,
        "first_loss": losses[0] if losses else None,
        "final_loss": losses[-1] if losses else None,
        "train_loss": result.training_loss,
        "steps": trainer.state.global_step,
        "warmup_steps": trainer.args.warmup_steps,
        **batch_sizes(trainer.args),
        "repeated_examples_per_epoch": repeated,
        "distributed_type": distributed_type,
        "mixed_precision": trainer.accelerator.mixed_precision,
        "software": software_versions(),
        "git_commit": commit,
        "recipe": recipe.to_dict(),
        "frozen_token_rows": len(frozen),
        "resumed_from": checkpoint.name if checkpoint else None,
        "timing": timing(result.metrics, trainer.state.global_step, checkpoint),
    }
    if trainer.is_world_process_zero():
        StudentManifest.write(cfg.output_dir, manifest)
        write_epoch_manifests(
            cfg.output_dir, manifest, trainer.state.log_history, epoch_steps(cfg, trainer, len(dataset))
        )
        remove_checkpoints(cfg.output_dir)
    return {**manifest, "main_process": trainer.is_world_process_zero()}


def main(argv: list[str] | None = None) -> int:
    def work(recipe, args):
        manifest = train(recipe, TrainConfig.from_recipe(recipe))
        if not manifest.pop("main_process"):
            return ""  # the main process reports for all
        kind = "adapter" if manifest["hyperparameters"]["lora"] else "model"
        return (
            f"loss {manifest['first_loss']:.4f} → {manifest['final_loss']:.4f} over {manifest['steps']} steps\n"
            f"{kind}: {manifest['output']}\nmanifest: {Path(manifest['output']).parent / STUDENT_MANIFEST}"
        )

    return recipe_command(__doc__, work, argv)


if __name__ == "__main__":
    sys.exit(main())
