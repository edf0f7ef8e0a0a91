"""Transformers backend: the model's own chat template, one `generate` per turn for every live
episode (each reading only what its kept keys/values do not cover, see kv_reuse), seedable
sampling, and an optional PEFT adapter that must change the model."""

from __future__ import annotations

from hindsight.models.gguf import model_provenance, resolve_model
from hindsight.policy.base import Conversation, Turn
from hindsight.policy.chat import ChatRenderer, use_chat_template
from hindsight.policy.kv_reuse import CACHE_ARGUMENT, KVReuse, Prefix, lay_out, plain_layers, returned_cache, split_rows
from hindsight.provenance import folder_fingerprint, text_hash

PROBE = [
    {"role": "system", "content": "You search for papers."},
    {"role": "user", "content": "Research brief:\nWe want faster graph attention. Which papers help?"},
]


class AdapterError(RuntimeError):
    pass


def check_adapter_changes_logits(model, tokenizer, adapter: str, tools: list[dict] | None = None) -> float:
    """Max |logit difference| between base and base+adapter on a probe prompt; an error if ~0.

    A LoRA whose B matrices are still zero (an untrained or wrongly saved adapter) loads fine and
    changes nothing; evaluating it would silently report the base model."""
    import torch

    ids = tokenizer.apply_chat_template(
        PROBE, tools=tools, add_generation_prompt=True, return_tensors="pt", return_dict=True
    ).to(model.device)
    with torch.no_grad():
        adapted = model(**ids).logits[0, -1].float()
        with model.disable_adapter():
            base = model(**ids).logits[0, -1].float()
    change = float((adapted - base).abs().max())
    if change < 1e-6:
        raise AdapterError(
            f"adapter {adapter} does not change the model's next-token logits (max change "
            f"{change:.2e}): it is untrained or was not saved with its weights"
        )
    return change


def template_record(policy) -> dict:
    """The template file a recipe named instead of the model's own, with its text's hash ({} if none)."""
    if not getattr(policy, "chat_template", None):
        return {}
    return {
        "chat_template": policy.chat_template,
        "chat_template_hash": text_hash(policy.renderer.tokenizer.chat_template),
    }


def describe_weights_policy(policy) -> dict:
    """The manifest's account of a policy that runs model weights itself (hf, vllm)."""
    return {
        "backend": policy.name,
        "model": policy.model_id,
        "revision": policy.revision,
        "adapter": policy.adapter,
        "temperature": policy.temperature,
        "top_p": policy.top_p,
        "max_new_tokens": policy.max_new_tokens,
        "seed": policy.seed,
        "enable_thinking": policy.enable_thinking,
        "dtype": policy.dtype,
        **template_record(policy),
        # a local folder retrained in place keeps its name: these tell the runs apart
        "model_fingerprint": folder_fingerprint(policy.model_id),
        "adapter_fingerprint": folder_fingerprint(policy.adapter),
        **model_provenance(policy.model_id),
        **merged_record(getattr(policy, "merged_from", None)),
    }


def merged_record(merged_from: dict | None) -> dict:
    """policy.merge_adapter: what was folded into the served weights, pinned like an unmerged run's."""
    if not merged_from:
        return {}
    return {
        "merged_from": {
            **merged_from,
            "adapter_fingerprint": folder_fingerprint(merged_from["adapter"]),
            **model_provenance(merged_from["model"]),
        }
    }


class HFPolicy:
    name = "hf"

    def __init__(
        self,
        model: str,
        *,
        adapter: str | None = None,
        revision: str | None = None,
        temperature: float = 0.0,
        top_p: float = 1.0,
        max_new_tokens: int = 256,
        seed: int = 0,
        device: str | None = None,
        dtype: str = "auto",
        tool_style: str = "auto",
        enable_thinking: bool = False,
        max_context: int | None = None,
        reuse_cache: bool = True,
        chat_template: str | None = None,
        merged_from: dict | None = None,
    ):
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self.model_id, self.adapter, self.revision = model, adapter, revision
        self.merged_from = merged_from  # policy.merge_adapter: the model and adapter folded into `model`
        self.temperature, self.top_p, self.max_new_tokens, self.seed = temperature, top_p, max_new_tokens, seed
        self.enable_thinking, self.dtype = enable_thinking, dtype
        weights = resolve_model(model)  # a .gguf file becomes its dequantised folder
        self.tokenizer = AutoTokenizer.from_pretrained(weights, revision=revision)
        self.chat_template = chat_template
        use_chat_template(self.tokenizer, chat_template, "policy.chat_template")
        self.tokenizer.padding_side = "left"
        if self.tokenizer.pad_token is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        self.model = AutoModelForCausalLM.from_pretrained(weights, revision=revision, dtype=dtype).to(device).eval()
        if adapter:
            from peft import PeftModel

            self.model = PeftModel.from_pretrained(self.model, adapter).eval()
            self.adapter_logit_change = check_adapter_changes_logits(self.model, self.tokenizer, adapter)
        self._ready(tool_style, max_context, reuse_cache)

    @classmethod
    def from_model(
        cls,
        model,
        tokenizer,
        *,
        name: str,
        temperature: float,
        top_p: float = 1.0,
        max_new_tokens: int = 256,
        seed: int = 0,
        enable_thinking: bool = False,
        tool_style: str = "auto",
        max_context: int | None = None,
    ) -> HFPolicy:
        """A policy over a model already in memory (the one RL is training): nothing is loaded, and
        the caller keeps the model in the mode it wants. `name` stands for the model in manifests."""
        policy = cls.__new__(cls)
        policy.model_id, policy.adapter, policy.revision = name, None, None
        policy.temperature, policy.top_p, policy.max_new_tokens, policy.seed = temperature, top_p, max_new_tokens, seed
        policy.enable_thinking, policy.dtype = enable_thinking, str(model.dtype).rpartition(".")[2]
        policy.model, policy.tokenizer = model, tokenizer
        policy._ready(tool_style, max_context, reuse_cache=True)
        return policy

    def _ready(self, tool_style: str, max_context: int | None, reuse_cache: bool) -> None:
        self.max_context = max_context or getattr(self.model.config, "max_position_embeddings", 32768)
        self.renderer = ChatRenderer(self.tokenizer, self.enable_thinking, tool_style)
        self.kv = KVReuse() if reuse_cache else None
        # every prompt's tokens, and those the model actually read (the rest came from kept keys/values)
        self.usage = {"prompt_tokens": 0, "read_tokens": 0}
        self.turns = 0

    def describe(self) -> dict:
        return describe_weights_policy(self)

    def act(self, batch: list[Conversation], tools: list[dict]) -> list[Turn]:
        prompts = [self.renderer.prompt_ids(conv, tools) for conv in batch]
        turns: list[Turn | None] = [
            Turn(failure=f"context_overflow: {len(p)} prompt tokens + {self.max_new_tokens} new > {self.max_context}")
            if len(p) + self.max_new_tokens > self.max_context
            else None
            for p in prompts
        ]
        fits = [i for i, turn in enumerate(turns) if turn is None]
        if fits:
            if self.kv and self.kv.shared is None:
                self._read_shared_prefix(batch[0], tools)
            for i, tokens in zip(fits, self._generate([id(batch[i]) for i in fits], [prompts[i] for i in fits])):
                turns[i] = self.renderer.turn(tokens, len(prompts[i]))
        self.turns += 1
        return turns

    def _generate(self, keys: list[int], prompts: list[list[int]]) -> list[list[int]]:
        import torch

        prefixes = self.kv.prefixes(keys, prompts) if self.kv else [None] * len(prompts)
        inputs = lay_out(prefixes, prompts, self.tokenizer.pad_token_id, self.model.device)
        self.usage["prompt_tokens"] += sum(map(len, prompts))
        self.usage["read_tokens"] += int(inputs.attention_mask.sum()) - sum(len(p.ids) for p in prefixes if p)
        sampling = (
            {"do_sample": True, "temperature": self.temperature, "top_p": self.top_p}
            if self.temperature > 0
            else {"do_sample": False}
        )
        torch.manual_seed(self.seed + self.turns)  # seedable, and different at every turn
        with torch.no_grad():
            output = self.model.generate(
                input_ids=inputs.input_ids,
                attention_mask=inputs.attention_mask,
                **{CACHE_ARGUMENT: inputs.cache},
                max_new_tokens=self.max_new_tokens,
                pad_token_id=self.tokenizer.pad_token_id,
                return_dict_in_generate=True,
                **sampling,
            )
        new = output.sequences[:, inputs.input_ids.shape[1] :]
        if self.kv:
            layers = plain_layers(returned_cache(output))
            if layers is None:
                self.kv = None  # a sliding-window or quantized cache: every turn re-reads its prompt
            else:
                mask = torch.cat([inputs.attention_mask, torch.ones_like(new)], dim=1)
                self.kv.keep(keys, split_rows(output.sequences, mask, layers))
        return [[t for t in row.tolist() if t != self.tokenizer.pad_token_id] for row in new]

    def _read_shared_prefix(self, conversation: Conversation, tools: list[dict]) -> None:
        """The system prompt and tool schema every conversation opens with, read once."""
        import torch

        ids = self.renderer.opening_ids(conversation, tools)
        if not ids:
            return
        with torch.no_grad():
            output = self.model(input_ids=torch.tensor([ids], device=self.model.device), use_cache=True)
        layers = plain_layers(returned_cache(output))
        if layers is None:
            self.kv = None
            return
        self.kv.shared = Prefix(ids, [(k[0], v[0]) for k, v in layers])
        self.usage["read_tokens"] += len(ids)
