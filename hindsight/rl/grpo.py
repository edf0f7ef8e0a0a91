"""GRPO of a student on the search environment: TRL's GRPOTrainer, whole episodes as rollouts.

    python train/rl.py recipes/demo.yaml
    accelerate launch train/rl.py recipes/demo.yaml --set rl.steps=40

Each step plays `group_size` sampled episodes of `targets_per_step` train targets with the model
being trained (hindsight/rl/rollout.py) and scores them where the labels are
(hindsight/rl/reward.py); GRPO pushes each episode's actions by its reward relative to its
group. Dev targets, played greedily at the start, every `dev_every` steps and at the end, choose
the student that is saved: the start itself when no step beat it. Eval targets are never read.

Writes <output_dir>/adapter or model/ with train_manifest.json, which eval/run.py --student reads
as it reads an SFT student's, and rewards.jsonl (each step's train reward, each dev scoring).
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sys
from dataclasses import asdict
from pathlib import Path

from hindsight.config import ConfigError, read_lora
from hindsight.jsonl import sha256_file
from hindsight.log import get_logger
from hindsight.models.gguf import model_provenance, resolve_model
from hindsight.prompts import initial_messages
from hindsight.provenance import git_commit, software_versions, text_hash
from hindsight.recipe import recipe_command
from hindsight.resume import checkpoint_to_resume, remove_checkpoints, resume_key, write_key
from hindsight.rl.config import RLConfig
from hindsight.rl.reward import EpisodeReward, distinct_share, episode_reward
from hindsight.rl.rollout import EpisodeRollout, prompt_key
from hindsight.stages import STUDENT_MANIFEST, DistillOutput, StudentManifest, student_record
from hindsight.trainer_args import (
    batch_sizes,
    checkpointing_flag,
    precision_flags,
    quiet_upstream_deprecations,
    without_accelerator,
)

REWARDS_LOG = "rewards.jsonl"
# Written into each checkpoint after the Trainer's own files (rl.save_every): what else a resumed
# run needs to go on as the uninterrupted one would, and a copy of the best dev student so far.
RL_STATE = "rl_state.json"
BEST_COPY = "best-student"
# TRL's per-step metrics that say whether GRPO had anything to learn from (Curves.signal)
SIGNAL_KEYS = (
    "frac_reward_zero_std",
    "reward_std",
    "kl",
    "entropy",
    "completions/mean_length",
    "completions/clipped_ratio",
    "clip_ratio/region_mean",
    "loss",
    "grad_norm",
    "learning_rate",
)
logger = get_logger(__name__)


def student_tokenizer(student: StudentManifest, weights: str):
    """The tokenizer the student was trained with: the one training saved beside it (its chat
    template may be a file of the recipe's, not the base model's), else the base model's."""
    from transformers import AutoTokenizer

    saved = Path(student.output)
    tokenizer = AutoTokenizer.from_pretrained(saved if (saved / "tokenizer_config.json").exists() else weights)
    if student.chat_template_hash and text_hash(tokenizer.chat_template or "") != student.chat_template_hash:
        raise ConfigError(
            f"{student.path}: the student was trained with a chat template that neither {saved} "
            f"nor {weights} holds; RL would render its episodes otherwise than it was trained on"
        )
    return tokenizer


def load_student(cfg: RLConfig):
    """(model, tokenizer, record of where it came from) for the student RL starts from."""
    from peft import PeftModel
    from transformers import AutoModelForCausalLM, AutoTokenizer

    path = Path(cfg.student)
    if (path / STUDENT_MANIFEST).exists():
        student = StudentManifest.read(path)
        if student.lora and cfg.lora is not None:
            raise ConfigError(
                f"rl.lora: {cfg.student} is a LoRA adapter, which RL keeps training; "
                "a second adapter is not stacked on it (set rl.lora: null)"
            )
        weights = resolve_model(student.base_model) if student.lora else str(student.output)
        tokenizer = student_tokenizer(student, weights)
        model = AutoModelForCausalLM.from_pretrained(weights, dtype="float32")
        if student.lora:
            model = PeftModel.from_pretrained(model, str(student.output), is_trainable=True)
        start = {
            "student": str(path),
            "manifest": str(student.path),
            "base_model": student.base_model,
            "lora": student.lora,
            "enable_thinking": bool(student.enable_thinking),
        }
    else:
        weights = resolve_model(cfg.student)
        tokenizer = AutoTokenizer.from_pretrained(weights)
        model = AutoModelForCausalLM.from_pretrained(weights, dtype="float32")
        start = {
            "student": cfg.student,
            "manifest": None,
            "base_model": cfg.student,
            "lora": False,
            "enable_thinking": False,
        }
    tokenizer.padding_side = "left"
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    return model, tokenizer, start


def vllm_flags(cfg: RLConfig) -> dict:
    """GRPOConfig's vLLM settings for `rl.generation: vllm`: an engine colocated with each process,
    which TRL keeps at the trained weights; the rollout plays its episodes there. An episode's
    sequence holds the environment's tokens too, and the rollout returns no sampling
    log-probabilities, so TRL's importance-sampling correction (vLLM's probabilities against the
    trainer's) is off."""
    if cfg.generation != "vllm":
        return {}
    return {
        "use_vllm": True,
        "vllm_mode": "colocate",
        "vllm_gpu_memory_utilization": cfg.vllm_memory,
        "vllm_max_model_length": cfg.max_context,
        "vllm_importance_sampling_correction": False,
    }


def checkpoint_flags(cfg: RLConfig) -> dict:
    """GRPOConfig's checkpointing: every rl.save_every steps, the last two kept (the newer one may
    be cut short by the stop it is there for), or none."""
    if not cfg.save_every:
        return {"save_strategy": "no"}
    return {"save_strategy": "steps", "save_steps": cfg.save_every, "save_total_limit": 2}


class EpochSampler:
    """TRL's RepeatSampler, made to resume: its shuffle draws one permutation an epoch from a single
    generator, so a run resumed in a later epoch would draw the first epoch's order again. The
    Trainer calls set_epoch at every epoch; it puts the generator where the uninterrupted run has it
    (the same orders as TRL's own, interrupted or not)."""

    def __init__(self, sampler):
        self.sampler = sampler

    def __iter__(self):
        return iter(self.sampler)

    def __len__(self) -> int:
        return len(self.sampler)

    def set_epoch(self, epoch: int) -> None:
        import torch

        if getattr(self.sampler, "shuffle", False) and self.sampler.seed is not None:
            self.sampler.generator.manual_seed(self.sampler.seed)
            for _ in range(epoch):
                torch.randperm(self.sampler.num_samples, generator=self.sampler.generator)


def resumable_trainer():
    """GRPOTrainer whose train sampler resumes in any epoch (EpochSampler)."""
    from trl import GRPOTrainer

    class ResumableGRPOTrainer(GRPOTrainer):
        def _get_train_sampler(self, dataset=None):
            return EpochSampler(super()._get_train_sampler(dataset))

    return ResumableGRPOTrainer


class Splits:
    """The recipe's train targets (rollouts) and dev targets (choosing the checkpoint); eval never."""

    def __init__(self, recipe, cfg: RLConfig):
        corpus, instances, _ = recipe.data.load()
        self.backend = recipe.search.build(corpus)
        # an SFT student replays the demonstrations it was trained on; rollouts on those targets
        # teach it to recite them, which no held-out target rewards (skip_distilled: nor on any
        # target whose antecedents the teacher saw)
        skipped = DistillOutput(Path(cfg.skip_demonstrated)).demonstrated_targets() if cfg.skip_demonstrated else set()
        if cfg.skip_distilled:
            skipped |= DistillOutput(Path(cfg.skip_distilled)).distilled_targets()
        every_train = [i for i in instances if i.split == "train"]
        self.train = [i for i in every_train if i.id not in skipped][: cfg.max_targets or None]
        if skipped:
            left_out = sum(i.id in skipped for i in every_train)
            logger.info(
                f"rl.skip_demonstrated/skip_distilled: {left_out} train targets left out, {len(self.train)} kept"
            )
        self.dev = [i for i in instances if i.split == "dev"][: cfg.dev_targets]
        if not self.train:
            raise ValueError(f"{recipe.data.source} has no train targets to roll out on")
        self.train_tasks = {inst.id: inst.task() for inst in self.train}
        self.tasks_by_prompt = {}
        for task in self.train_tasks.values():
            key = prompt_key(initial_messages(task, recipe.protocol.read_paper))
            if key in self.tasks_by_prompt:
                raise ValueError("two train targets share a brief and a cutoff, so their prompts cannot be told apart")
            self.tasks_by_prompt[key] = task

    def dataset(self, protocol):
        from datasets import Dataset

        return Dataset.from_list(
            [
                {"prompt": initial_messages(task, protocol.read_paper), "task_id": task.task_id}
                for task in self.train_tasks.values()
            ]
        )

    def instances_by_task(self) -> dict:
        return {self.train_tasks[inst.id].task_id: inst for inst in self.train}


class Curves:
    """rewards.jsonl: the mean train reward (and each term) of every step's rollouts, and every dev
    scoring; the best dev scoring's student is saved."""

    def __init__(self, output_dir: Path, weights: dict, resumed: dict | None = None):
        self.path = output_dir / REWARDS_LOG
        self.weights, self.best, self.best_step, self.rows = weights, None, None, []
        if resumed:  # the stopped run's rows up to its checkpoint; it may have logged later steps too
            rows = [json.loads(line) for line in self.path.read_text().splitlines()] if self.path.exists() else []
            self.rows = [row for row in rows if row["step"] <= resumed["step"]]
            self.best, self.best_step = resumed["best"], resumed["best_step"]
        self.path.write_text("".join(json.dumps(row) + "\n" for row in self.rows))

    def add(self, row: dict) -> None:
        self.rows.append(row)
        with open(self.path, "a") as handle:
            handle.write(json.dumps(row) + "\n")

    def train_step(self, step: int, terms: list[dict], actions: list[str], group_size: int) -> None:
        """The step's mean reward and terms, and `distinct`: how much its groups' sampled episodes
        differed from one another (hindsight.rl.reward.distinct_share)."""
        if terms:
            mean = {name: sum(t[name] for t in terms) / len(terms) for name in terms[0]}
            reward = sum(weight * mean[name] for name, weight in self.weights.items())
            distinct = distinct_share(actions, group_size)
            self.add(
                {"step": step, "split": "train", "reward": reward, "episodes": len(terms), "distinct": distinct, **mean}
            )

    def signal(self, step: int, logs: dict) -> None:
        """What TRL logged of a step's learning signal (rows of split "signal"): whether a group
        had any spread to learn from (frac_reward_zero_std: the share of groups whose episodes
        all got the same reward, so no advantage and no gradient), the spread within groups
        (reward_std), the KL to the start, episode lengths, entropy, the loss and gradient norm."""
        kept = {key: logs[key] for key in SIGNAL_KEYS if isinstance(logs.get(key), (int, float))}
        if kept:
            self.add({"step": step, "split": "signal", **kept})

    def dev_scoring(self, step: int, episodes: dict, instances: list) -> bool:
        """Adds a dev row; True when it is the best so far (strictly: a tie keeps the earlier student)."""
        scored = [episode_reward(episodes[inst.id], inst, self.weights) for inst in instances]
        mean = {name: sum(terms[name] for _, terms in scored) / len(scored) for name in scored[0][1]}
        reward = sum(r for r, _ in scored) / len(scored)
        self.add({"step": step, "split": "dev", "reward": reward, "episodes": len(scored), **mean})
        if self.best is None or reward > self.best:
            self.best, self.best_step = reward, step
            return True
        return False


def save_student(model, tokenizer, folder: Path) -> None:
    shutil.rmtree(folder, ignore_errors=True)
    model.save_pretrained(str(folder))
    tokenizer.save_pretrained(str(folder))


def save_rl_state(checkpoint: Path, step: int, rollout: EpisodeRollout, curves: Curves, student_dir: Path) -> None:
    """What a checkpoint needs beyond the Trainer's files: the rollout's sampling counter (each play
    is seeded from it), the best dev scoring and a copy of its student."""
    if student_dir.exists():
        shutil.copytree(student_dir, checkpoint / BEST_COPY, dirs_exist_ok=True)
    state = {"step": step, "rollout_calls": rollout.calls, "best": curves.best, "best_step": curves.best_step}
    (checkpoint / RL_STATE).write_text(json.dumps(state))


def resume_point(cfg: RLConfig, recipe, start: dict, output_dir: Path, args) -> tuple[Path | None, dict]:
    """(the checkpoint this run continues from, its rl state), or (None, {}) when there is none;
    ResumeError when the checkpoints there are of a run with other settings."""
    if not cfg.save_every:
        return None, {}
    sections = {name: recipe.to_dict().get(name) for name in ("data", "search", "protocol")}
    environment = hashlib.sha256(json.dumps(sections, sort_keys=True, default=str).encode()).hexdigest()
    manifest = start["manifest"]
    student = {**start, "manifest_sha256": sha256_file(Path(manifest)) if manifest else None}
    key = resume_key(asdict(cfg), environment, student, args.world_size)
    checkpoint = checkpoint_to_resume(output_dir, key, "rl", written_last=RL_STATE)
    if args.process_index == 0:
        write_key(output_dir, key)
    if checkpoint is None:
        return None, {}
    logger.info(f"resuming from {checkpoint} (rl.save_every)")
    return checkpoint, json.loads((checkpoint / RL_STATE).read_text())


def make_callback(
    cfg: RLConfig,
    splits: Splits,
    rollout: EpisodeRollout,
    reward: EpisodeReward,
    curves: Curves,
    tokenizer,
    student_dir: Path,
):
    from transformers import TrainerCallback

    def score_dev(step: int, model, is_main: bool) -> None:
        if not splits.dev:
            return
        episodes = rollout.play(model, {inst.id: inst.task() for inst in splits.dev}, greedy=True)
        if curves.dev_scoring(step, episodes, splits.dev) and is_main:
            save_student(model, tokenizer, student_dir)
        logger.info(
            f"dev reward at step {step}: {curves.rows[-1]['reward']:.4f} (best {curves.best:.4f} at step "
            f"{curves.best_step})"
        )

    class DevChoice(TrainerCallback):
        logged_batch = 0

        def on_train_begin(self, args, state, control, model=None, **kwargs):
            if state.global_step == 0:  # a resumed run scored its start before it stopped
                score_dev(0, model, state.is_world_process_zero)

        def on_save(self, args, state, control, **kwargs):
            if state.is_world_process_zero:
                checkpoint = Path(args.output_dir) / f"checkpoint-{state.global_step}"
                save_rl_state(checkpoint, state.global_step, rollout, curves, student_dir)

        def on_step_end(self, args, state, control, model=None, **kwargs):
            if reward.batches != self.logged_batch:  # a further step on the same rollouts adds no row
                self.logged_batch = reward.batches
                curves.train_step(state.global_step, reward.last_terms, reward.last_actions, cfg.group_size)
            if cfg.dev_every and state.global_step % cfg.dev_every == 0 and state.global_step < cfg.steps:
                score_dev(state.global_step, model, state.is_world_process_zero)

        def on_log(self, args, state, control, logs=None, **kwargs):
            if state.is_world_process_zero and logs:
                curves.signal(state.global_step, logs)

        def on_train_end(self, args, state, control, model=None, **kwargs):
            if cfg.dev_every == 0 or not splits.dev:
                curves.best_step = state.global_step
                if state.is_world_process_zero:
                    save_student(model, tokenizer, student_dir)
            else:
                score_dev(state.global_step, model, state.is_world_process_zero)

    return DevChoice()


def train(recipe, cfg: RLConfig) -> dict:
    """GRPO from the student cfg.student names, on whole episodes of the recipe's environment;
    the student of the best dev scoring is saved with its manifest, which is returned.

    Args:
        recipe: the loaded recipe (data, search, protocol, runs).
        cfg: the recipe's rl section.
    """
    import os

    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")  # rollout_func is TRL's documented, experimental hook
    from trl import GRPOConfig

    quiet_upstream_deprecations()
    model, tokenizer, start = load_student(cfg)
    lora_settings = read_lora(cfg.lora, "rl.lora")
    lora = lora_settings.peft_config() if lora_settings else None
    adapter = start["lora"] or lora is not None
    if cfg.beta and start["lora"]:
        raise ConfigError(
            "rl.beta > 0 with an SFT adapter as the start: TRL would take the base model without the "
            "adapter as its reference, not the SFT student; use beta 0 or a full-model start"
        )
    splits = Splits(recipe, cfg)
    output_dir = Path(cfg.output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)
    student_dir = output_dir / ("adapter" if adapter else "model")
    rollout = EpisodeRollout(
        splits.tasks_by_prompt,
        splits.backend,
        recipe.protocol,
        tokenizer,
        temperature=cfg.temperature,
        top_p=cfg.top_p,
        max_new_tokens=cfg.max_new_tokens,
        seed=cfg.seed,
        enable_thinking=start["enable_thinking"],
        tool_style=recipe.policy.tool_style,
    )
    reward = EpisodeReward(splits.instances_by_task(), cfg.reward)
    args = GRPOConfig(
        output_dir=str(output_dir),
        max_steps=cfg.steps,
        learning_rate=cfg.learning_rate,
        lr_scheduler_type="constant",
        per_device_train_batch_size=cfg.targets_per_step * cfg.group_size,
        gradient_accumulation_steps=1,
        num_generations=cfg.group_size,
        num_iterations=cfg.iterations,
        beta=cfg.beta,
        loss_type=cfg.loss_type,
        top_entropy_quantile=cfg.top_entropy_quantile,
        scale_rewards=cfg.scale_rewards,
        temperature=cfg.temperature,
        top_p=cfg.top_p,
        logging_steps=cfg.logging_steps,
        **checkpoint_flags(cfg),
        report_to=[],
        seed=cfg.seed,
        **checkpointing_flag(GRPOConfig, False),
        **precision_flags(cfg.precision),
        **without_accelerator(),
        **vllm_flags(cfg),
    )
    checkpoint, resumed = resume_point(cfg, recipe, start, output_dir, args)
    if resumed:
        rollout.calls = resumed["rollout_calls"]
        if (checkpoint / BEST_COPY).is_dir():
            shutil.rmtree(student_dir, ignore_errors=True)
            shutil.copytree(checkpoint / BEST_COPY, student_dir)
    curves = Curves(output_dir, cfg.reward, resumed)
    trainer = resumable_trainer()(
        model=model,
        reward_funcs=reward,
        args=args,
        train_dataset=splits.dataset(recipe.protocol),
        processing_class=tokenizer,
        peft_config=lora,
        rollout_func=rollout,
        callbacks=[make_callback(cfg, splits, rollout, reward, curves, tokenizer, student_dir)],
    )
    rollout.trainer = trainer  # the first dev scoring comes before any rollout hands it over
    commit = git_commit()  # the code that trains: a checkout pulled during a long run moves HEAD
    trainer.train(resume_from_checkpoint=str(checkpoint) if checkpoint else None)
    base_model = start["base_model"]
    manifest = {
        **student_record(
            base_model,
            start.get("revision"),
            model_provenance(base_model),
            student_dir,
            tokenizer,
            start["enable_thinking"],
        ),
        "stage": "rl",
        "start": start,
        # StudentManifest reads hyperparameters.lora: truthy when the student is an adapter
        "hyperparameters": {**asdict(cfg), "lora": asdict(lora_settings) if lora_settings else adapter or None},
        "reward": {"weights": cfg.reward, "function": "hindsight.rl.reward.episode_reward"},
        "group_size": cfg.group_size,
        "beta": cfg.beta,
        "loss_type": cfg.loss_type,
        "scale_rewards": cfg.scale_rewards,
        "generation": cfg.generation,
        "steps": trainer.state.global_step,
        "chosen_step": curves.best_step,
        "best_dev_reward": curves.best,
        "curves": str(curves.path),
        "resumed_from": checkpoint.name if checkpoint else None,
        **batch_sizes(trainer.args),
        "software": software_versions(),
        "git_commit": commit,
        "recipe": recipe.to_dict(),
    }
    if trainer.is_world_process_zero():
        StudentManifest.write(output_dir, manifest)
        remove_checkpoints(output_dir)
    return {**manifest, "main_process": trainer.is_world_process_zero(), "rows": curves.rows}


def main(argv: list[str] | None = None) -> int:
    def work(recipe, args):
        manifest = train(recipe, RLConfig.from_recipe(recipe))
        if not manifest.pop("main_process"):
            return ""
        train_rows = [row for row in manifest["rows"] if row["split"] == "train"]
        first, last = (train_rows[0]["reward"], train_rows[-1]["reward"]) if train_rows else (0.0, 0.0)
        return (
            f"train reward {first:.4f} (step 1) → {last:.4f} (step {manifest['steps']}); the student of step "
            f"{manifest['chosen_step']} (best dev reward {manifest['best_dev_reward']})\n"
            f"student: {manifest['output']}\nmanifest: {Path(manifest['output']).parent / STUDENT_MANIFEST}\n"
            f"rewards: {manifest['curves']}"
        )

    return recipe_command(__doc__, work, argv)


if __name__ == "__main__":
    sys.exit(main())
