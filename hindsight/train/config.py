"""The recipe's `train` section."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from hindsight.allocator import INT_MAX
from hindsight.config import ConfigError, LoraSettings, from_mapping, read_chat_template, read_lora


@dataclass(frozen=True)
class TrainConfig:
    base_model: str = "Qwen/Qwen3-8B"  # hub id or local path
    revision: str | None = None  # the hub revision of base_model
    chat_template: str | None = None  # a .jinja file; default: the model's own
    enable_thinking: bool = False  # must match how the evaluator renders prompts
    data: str | None = None  # the SFT set; default <distill.out_dir>/sft.jsonl
    max_examples: int | None = None  # only the first N rows of it (a smoke test, a CPU-sized run)
    output_dir: str = "outputs/sft"  # adapter/ or model/, train_manifest.json, logs
    lora: dict | None = field(default_factory=dict)  # LoraSettings fields; null = full fine-tuning
    learning_rate: float = 5e-6  # peak learning rate
    lr_scheduler: str = "cosine"  # a transformers scheduler name: cosine, linear, constant, ...
    warmup_ratio: float = 0.03  # share of the steps spent warming up
    epochs: float = 3.0  # passes over the SFT set
    per_device_batch_size: int = 1  # rows per process per micro-step
    gradient_accumulation_steps: int = (
        8  # micro-steps per optimiser step (effective batch: this × the line above × processes)
    )
    max_length: int = 16384  # tokens a row may have; longer rows are dropped (see max_drop_share)
    max_drop_share: float = 0.05  # refuse to start if more rows than this are too long
    packing: bool = False  # padding-free packing of sequences
    precision: str = (
        "auto"  # auto (bf16 autocast on a GPU that supports it or a CPU with AMX, else fp32), bf16, fp16, fp32
    )
    gradient_checkpointing: bool = False  # recompute activations in the backward pass (less memory, more time)
    frozen_tokens: str | None = None  # full fine-tuning: tokens whose text matches this regex keep their embeddings
    optimizer: str = "adamw_torch"  # a transformers optimizer name
    weight_decay: float = 0.0  # decoupled weight decay
    seed: int = 0  # data order, LoRA initialisation, dropout
    logging_steps: int = 1  # optimiser steps between loss lines
    save_every: int | None = None  # optimiser steps between checkpoints; a rerun resumes from the last (null: none)
    save_epochs: bool = False  # also keep the student as it was at each earlier epoch's end, in epoch-N/ (choose epochs on dev from one run)
    report_to: str = "none"  # none, tensorboard, wandb
    malloc_mmap_threshold: int = (
        2 * 1024 * 1024
    )  # Linux glibc: bytes above which an allocation is mapped alone and returned on free (0: glibc's own, which lets memory grow; a small model runs faster with its whole step under it)

    @classmethod
    def from_recipe(cls, recipe) -> TrainConfig:
        config = from_mapping(cls, recipe.stages.get("train"), f"{recipe.path}: train")
        config.lora_settings(f"{recipe.path}: train.lora")
        config.check_frozen_tokens(f"{recipe.path}: train")
        config.check_malloc_mmap_threshold(f"{recipe.path}: train")
        return config

    def check_malloc_mmap_threshold(self, where: str = "train") -> None:
        if not 0 <= self.malloc_mmap_threshold <= INT_MAX:
            raise ConfigError(
                f"{where}.malloc_mmap_threshold: between 0 and {INT_MAX:,} bytes (glibc's mallopt takes an int), "
                f"got {self.malloc_mmap_threshold:,}"
            )

    def check_frozen_tokens(self, where: str = "train") -> None:
        if self.frozen_tokens is None:
            return
        try:
            re.compile(self.frozen_tokens)
        except re.error as exc:
            raise ConfigError(
                f"{where}.frozen_tokens: {self.frozen_tokens!r} is not a regular expression ({exc})"
            ) from None
        if self.lora is not None:
            raise ConfigError(
                f"{where}.frozen_tokens is for full fine-tuning (lora: null); LoRA freezes every embedding"
            )
        if self.weight_decay:
            raise ConfigError(f"{where}.frozen_tokens needs weight_decay 0: decay would still shrink the frozen rows")

    def lora_settings(self, where: str = "train.lora") -> LoraSettings | None:
        return read_lora(self.lora, where)


def recipe_summary(recipe) -> str:
    """For `hindsight validate`: the train section read and checked, and what it would write."""
    cfg = TrainConfig.from_recipe(recipe)
    lora = cfg.lora_settings(f"{recipe.path}: train.lora")
    if cfg.chat_template:
        read_chat_template(cfg.chat_template, f"{recipe.path}: train.chat_template")
    return f"{'LoRA r ' + str(lora.rank) if lora else 'full fine-tuning'} of {cfg.base_model} → {cfg.output_dir}"
