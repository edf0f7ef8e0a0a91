"""Rollouts for TRL's GRPOTrainer: whole episodes in the search environment, as token sequences.

TRL hands `rollout_func` the prompts of a batch (each target's deployment prompt, repeated once per
episode of its group). Each prompt is played as a full episode by the model being trained,
through the same runner, tools, budget and tool-call reading as evaluation; the episode becomes
one sequence: the first prompt, then everything after it, where `env_mask` is 1 on the tokens the
model produced (its actions, as `hindsight.masking` marks them for SFT) and 0 on what the
environment added (search results, the notice after a malformed reply).
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from hindsight.masking import IGNORE, MaskingError, encode_conversation
from hindsight.policy.hf import HFPolicy
from hindsight.policy.vllm_backend import VLLMPolicy
from hindsight.protocol import ProtocolConfig, tool_schemas
from hindsight.runner import play_episodes
from hindsight.schema import Episode, Task
from hindsight.search import SearchBackend


class RolloutError(RuntimeError):
    pass


def prompt_key(messages: list[dict]) -> str:
    return json.dumps(messages, sort_keys=True, ensure_ascii=False)


def episode_sequence(
    tokenizer, episode: Episode, tools: list[dict], enable_thinking: bool
) -> tuple[list[int], list[int], list[int]]:
    """(prompt ids, completion ids, env mask) of one episode. An episode that never got a reply (its
    first prompt overflowed) becomes a single masked end-of-turn token, so that it still fills its
    place in the group, with nothing trained."""
    if not any(m.get("role") == "assistant" for m in episode.messages):
        from hindsight.policy.chat import render_chat

        prompt = render_chat(tokenizer, episode.messages, tools, True, enable_thinking)
        return tokenizer(prompt, add_special_tokens=False)["input_ids"], [tokenizer.eos_token_id], [0]
    try:
        encoded = encode_conversation(
            tokenizer,
            episode.messages,
            tools,
            enable_thinking=enable_thinking,
            where=f"episode {episode.instance_id}",
            allow_empty_actions=True,  # a sampled turn may end without acting; its reward says so
        )
    except MaskingError as exc:
        raise RolloutError(str(exc)) from None
    if len(encoded) != 1:
        raise RolloutError(
            "this chat template rewrites earlier turns, so an episode is not one sequence; "
            "RL needs one (hindsight.masking explains when a template allows it)"
        )
    ids, labels = encoded[0].input_ids, encoded[0].labels
    first = next(i for i, label in enumerate(labels) if label != IGNORE)
    return ids[:first], ids[first:], [int(label != IGNORE) for label in labels[first:]]


class EpisodeRollout:
    """`rollout_func` for GRPOTrainer. `tasks` maps each deployment prompt (its messages, as the
    dataset's `prompt` column holds them) to its Task: the rollout sees Tasks only."""

    def __init__(
        self,
        tasks_by_prompt: Mapping[str, Task],
        backend: SearchBackend,
        protocol: ProtocolConfig,
        tokenizer,
        *,
        temperature: float,
        top_p: float,
        max_new_tokens: int,
        seed: int,
        enable_thinking: bool = False,
        tool_style: str = "auto",
    ):
        self.tasks_by_prompt, self.backend, self.protocol, self.tokenizer = (
            dict(tasks_by_prompt),
            backend,
            protocol,
            tokenizer,
        )
        self.sampling = {
            "temperature": temperature,
            "top_p": top_p,
            "max_new_tokens": max_new_tokens,
            "enable_thinking": enable_thinking,
            "tool_style": tool_style,
        }
        self.seed, self.calls = seed, 0
        self.tools = tool_schemas(protocol)
        self.trainer = None  # the GRPOTrainer, set by the rl stage: its vLLM engine generates where it has one

    def __call__(self, prompts: list[list[dict]], trainer) -> dict:
        tasks = {}
        for i, prompt in enumerate(prompts):
            task = self.tasks_by_prompt.get(prompt_key(prompt))
            if task is None:
                raise RolloutError(f"prompt {i} of the batch is not one of the rollout's tasks")
            tasks[f"rollout-{i}"] = task  # each repeat of a prompt is an episode of its own
        self.trainer = trainer
        model = trainer.accelerator.unwrap_model(trainer.model)
        episodes = self.play(model, tasks)
        sequences = [
            episode_sequence(self.tokenizer, episodes[key], self.tools, self.sampling["enable_thinking"])
            for key in tasks
        ]
        return {
            "prompt_ids": [s[0] for s in sequences],
            "completion_ids": [s[1] for s in sequences],
            "logprobs": [[0.0] * len(s[1]) for s in sequences],  # read by TRL only for vLLM's correction
            "env_mask": [s[2] for s in sequences],
            "episode": [episodes[key] for key in tasks],
        }

    def play(self, model, tasks: Mapping[str, Task], greedy: bool = False) -> dict[str, Episode]:
        """Episodes of `model` on `tasks` (sampled, or greedy for dev scoring), the model put back in
        the mode it was in; on TRL's vLLM engine where the trainer has one."""
        sampling = dict(self.sampling, temperature=0.0) if greedy else self.sampling
        seed = self.seed + 7919 * self.calls
        self.calls += 1
        engine = self.vllm_engine()
        if engine is not None:
            policy = VLLMPolicy(
                "rl-student",
                engine=engine,
                tokenizer=self.tokenizer,
                seed=seed,
                max_context=self.trainer.args.vllm_max_model_length,
                guard_mixed_batches=False,
                **sampling,
            )
            return play_episodes(policy, tasks, self.backend, self.protocol, batch_size=len(tasks))
        policy = HFPolicy.from_model(model, self.tokenizer, name="rl-student", seed=seed, **sampling)
        was_training = model.training
        model.eval()
        try:
            episodes = play_episodes(policy, tasks, self.backend, self.protocol, batch_size=len(tasks))
        finally:
            model.train(was_training)
        return episodes

    def vllm_engine(self):
        """The vLLM engine TRL colocates with this process (GRPOConfig use_vllm, vllm_mode colocate),
        holding the weights of the current step, or None where transformers generates."""
        trainer = self.trainer
        if trainer is None or not getattr(trainer, "use_vllm", False):
            return None
        generation = trainer.vllm_generation
        if generation.mode != "colocate":
            raise RolloutError(
                "rl.generation vllm plays episodes on the engine colocated with each process; "
                f"TRL's {generation.mode!r} mode is not supported"
            )
        # TRL pushes the weights before each step's rollouts; a dev scoring between steps pushes them
        # too, under TRL's own record of the step last pushed, so a step's weights go over once
        if trainer._last_loaded_step != trainer.state.global_step:
            generation.sync_weights()
            trainer._last_loaded_step = trainer.state.global_step
        return generation.llm
