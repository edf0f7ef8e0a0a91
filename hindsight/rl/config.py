"""The recipe's `rl` section."""

from __future__ import annotations

from dataclasses import dataclass, field

from hindsight.config import ConfigError, from_mapping, read_lora

REWARD_TERMS = {
    "ndcg10": "final nDCG@10 of the submission",
    "exposed_gain": "share of the ideal gain that the episode's searches returned",
    "selected_gain": "share of the ideal gain that was both returned and submitted",
    "malformed": "1 when the episode ended without a valid submission (give it a negative weight)",
    "unsurfaced": "share of submitted ids no search of the episode returned (give it a negative weight)",
}


@dataclass(frozen=True)
class RLConfig:
    student: str = "outputs/sft"  # where RL starts: a train/sft.py output_dir (its manifest says what it holds), or a model folder or hub id
    output_dir: str = "outputs/rl"  # adapter/ or model/, train_manifest.json, rewards.jsonl, rewards.png
    lora: dict | None = (
        None  # a fresh LoRA (LoraSettings fields) for a full-model start; an SFT adapter keeps training as it is
    )
    max_targets: int | None = None  # only the first N train targets
    skip_demonstrated: str | None = (
        None  # a distillation folder: train targets with an SFT demonstration there are not rolled out (the student has them by heart)
    )
    skip_distilled: str | None = (
        None  # a distillation folder: every train target its teacher ran on is not rolled out (RL only where no antecedent was seen)
    )
    dev_targets: int = 20  # dev targets scored greedily to choose the checkpoint (0: keep the last)
    dev_every: int = 5  # optimiser steps between dev scorings (and at the start and the end)
    steps: int = 20  # optimiser steps
    group_size: int = 4  # episodes per target per step; advantages are relative within a group
    targets_per_step: int = 2  # distinct targets per optimiser step
    learning_rate: float = 1e-5  # the optimiser's rate
    iterations: int = 1  # optimiser steps taken on each batch of rollouts (TRL's num_iterations, GRPO's μ); above 1 the loss's clipping acts
    beta: float = 0.0  # KL penalty toward the starting student (0: none, and no reference copy kept)
    loss_type: str = "dapo"  # TRL's GRPO loss: dapo, grpo, dr_grpo, bnpo, ...
    top_entropy_quantile: float = 1.0  # share of reply tokens, highest entropy first, in the policy loss (1: all)
    scale_rewards: str = "group"  # advantages divided by the group's reward spread (group), the batch's (batch), or not (none: a near-tie stays a near-tie)
    temperature: float = 1.0  # sampling temperature of the rollouts (and of the trainer's log-probabilities)
    top_p: float = 1.0  # nucleus sampling mass of the rollouts
    max_new_tokens: int = 256  # most tokens one reply may have
    reward: dict = field(default_factory=lambda: {"ndcg10": 1.0})  # weight of each term in REWARD_TERMS
    precision: str = "fp32"  # fp32, bf16 or fp16
    seed: int = 0  # target order, sampling, LoRA initialisation
    logging_steps: int = 1  # optimiser steps between log lines
    save_every: int | None = None  # optimiser steps between checkpoints; a rerun resumes from the last (null: none)
    generation: str = "transformers"  # who plays the rollouts: transformers (the trained model itself) or vllm (TRL's engine colocated with each process, GPU)
    vllm_memory: float = 0.3  # with generation vllm: the share of each GPU's memory the engine may take
    max_context: int = (
        32768  # with generation vllm: the engine's longest sequence (prompt and every turn of an episode)
    )

    @classmethod
    def from_recipe(cls, recipe) -> RLConfig:
        where = f"{recipe.path}: rl"
        config = from_mapping(cls, recipe.stages.get("rl"), where)
        config.check(where)
        return config

    def check(self, where: str = "rl") -> None:
        unknown = sorted(set(self.reward) - set(REWARD_TERMS))
        if unknown:
            raise ConfigError(f"{where}.reward: unknown term(s) {', '.join(unknown)}; known: {', '.join(REWARD_TERMS)}")
        if not any(self.reward.values()):
            raise ConfigError(f"{where}.reward: every weight is 0; nothing would be rewarded")
        if self.group_size < 2:
            raise ConfigError(f"{where}.group_size: {self.group_size}; a group needs at least 2 episodes to compare")
        if self.save_every is not None and self.save_every < 1:
            raise ConfigError(f"{where}.save_every: {self.save_every}; steps between checkpoints, at least 1 (or null)")
        if self.steps < 1 or self.targets_per_step < 1:
            raise ConfigError(f"{where}: steps and targets_per_step must be at least 1")
        if not 0.0 < self.top_entropy_quantile <= 1.0:
            raise ConfigError(
                f"{where}.top_entropy_quantile: {self.top_entropy_quantile}; a share of the tokens, above 0 and at most 1"
            )
        if self.iterations < 1:
            raise ConfigError(
                f"{where}.iterations: {self.iterations}; optimiser steps per batch of rollouts, at least 1"
            )
        if self.save_every and self.save_every % self.iterations:
            # a checkpoint inside a batch's steps would resume without the batch it was training on
            raise ConfigError(
                f"{where}.save_every: {self.save_every} is not a multiple of rl.iterations ({self.iterations})"
            )
        if self.temperature <= 0:
            raise ConfigError(f"{where}.temperature: {self.temperature}; GRPO needs sampled episodes (> 0)")
        read_lora(self.lora, f"{where}.lora")
        if self.generation not in ("transformers", "vllm"):
            raise ConfigError(f"{where}.generation: {self.generation!r} is not transformers or vllm")
        if not 0 < self.vllm_memory <= 1:
            raise ConfigError(f"{where}.vllm_memory: {self.vllm_memory}; a share of the GPU's memory, in (0, 1]")
        if self.scale_rewards not in ("group", "batch", "none"):
            raise ConfigError(f"{where}.scale_rewards: {self.scale_rewards!r} is not group, batch or none")
        if self.precision not in ("fp32", "bf16", "fp16"):
            raise ConfigError(f"{where}.precision: {self.precision!r} is not fp32, bf16 or fp16")


def recipe_summary(recipe) -> str:
    """For `hindsight validate`: the rl section read and checked."""
    if "rl" not in recipe.stages:
        return "no rl section"
    cfg = RLConfig.from_recipe(recipe)
    terms = " ".join(
        f"{'-' if weight < 0 else '+'} {abs(weight):g}·{term}" for term, weight in cfg.reward.items() if weight
    ).removeprefix("+ ")
    return (
        f"rl: GRPO from {cfg.student}, {cfg.steps} steps of {cfg.targets_per_step} targets × {cfg.group_size} "
        f"episodes played by {cfg.generation}, reward {terms}, beta {cfg.beta:g} → {cfg.output_dir}"
    )
