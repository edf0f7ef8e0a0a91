"""Typed configuration from YAML-like mappings: unknown keys and wrong types are errors that
name the section and key, never silently ignored."""

from __future__ import annotations

import dataclasses
import re
import types
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from hindsight.errors import UserError

_FLOAT = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")
T = TypeVar("T")


class ConfigError(UserError):
    pass


def read_chat_template(path: str | Path, where: str) -> str:
    """The text of a chat template file a recipe names; a missing or empty file is an error that
    names `where` (the recipe's key), raised by `hindsight validate` before any stage runs."""
    file = Path(path).expanduser()
    if not file.is_file():
        raise ConfigError(f"{where}: no chat template file at {file} (paths are read from the current folder)")
    text = file.read_text(encoding="utf-8")
    if not text.strip():
        raise ConfigError(f"{where}: {file} is empty")
    return text


def _check_type(value: Any, annotation: Any, where: str) -> Any:
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        options = typing.get_args(annotation)
        if value is None and type(None) in options:
            return None
        (inner,) = [option for option in options if option is not type(None)]
        return _check_type(value, inner, where)
    if annotation is dict or origin is dict:
        if not isinstance(value, dict):
            raise ConfigError(f"{where}: expected a mapping, got {value!r}")
        return value
    if annotation is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if annotation is float and isinstance(value, str) and _FLOAT.fullmatch(value.strip()):
        return float(value)  # YAML 1.1 reads 5e-6 (no dot) as a string
    if annotation in (int, float, str, bool):
        if isinstance(value, bool) and annotation is not bool or not isinstance(value, annotation):
            raise ConfigError(f"{where}: expected {annotation.__name__}, got {value!r}")
        return value
    if origin is tuple:
        if not isinstance(value, (list, tuple)):
            raise ConfigError(f"{where}: expected a list, got {value!r}")
        (item_type, *_rest) = typing.get_args(annotation)
        return tuple(_check_type(v, item_type, f"{where}[{i}]") for i, v in enumerate(value))
    return value


def from_mapping(cls: type[T], data: dict | None, where: str) -> T:
    """Build dataclass `cls` from `data`; `where` (e.g. 'recipe.yaml: protocol') prefixes errors."""
    if data is not None and not isinstance(data, dict):
        raise ConfigError(f"{where}: expected a mapping of keys to values, got {type(data).__name__} {data!r}")
    data = dict(data or {})
    fields = {f.name: f for f in dataclasses.fields(cls)}
    unknown = sorted(set(data) - set(fields))
    if unknown:
        raise ConfigError(f"{where}: unknown key(s) {', '.join(unknown)}; known: {', '.join(fields)}")
    hints = typing.get_type_hints(cls)
    values = {name: _check_type(value, hints[name], f"{where}.{name}") for name, value in data.items()}
    try:
        return cls(**values)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{where}: {exc}") from exc


# vLLM serves LoRA adapters of these ranks (its --max-lora-rank choices).
VLLM_LORA_RANKS = (1, 8, 16, 32, 64, 128, 256, 320, 512)


@dataclass(frozen=True)
class LoraSettings:
    rank: int = 16  # the adapter's rank (one vLLM can serve: 1, 8, 16, 32, 64, ...)
    alpha: int = 32  # LoRA scaling numerator (the update is scaled by alpha / rank)
    dropout: float = 0.0  # dropout on the adapter's input
    target_modules: tuple[str, ...] = (
        "q_proj",
        "k_proj",
        "v_proj",
        "o_proj",
        "gate_proj",
        "up_proj",
        "down_proj",
    )  # the linear layers that get an adapter

    def peft_config(self):
        """These settings as peft's LoraConfig for a causal LM (SFT and RL alike)."""
        from peft import LoraConfig

        return LoraConfig(
            r=self.rank,
            lora_alpha=self.alpha,
            lora_dropout=self.dropout,
            target_modules=list(self.target_modules),
            task_type="CAUSAL_LM",
            bias="none",
        )


def read_lora(raw: dict | None, where: str) -> LoraSettings | None:
    """A recipe's `lora` mapping (null: no adapter), its rank one that vLLM can serve."""
    if raw is None:
        return None
    settings = from_mapping(LoraSettings, raw, where)
    if settings.rank not in VLLM_LORA_RANKS:
        raise ConfigError(f"{where}.rank: {settings.rank} cannot be served by vLLM; use one of {VLLM_LORA_RANKS}")
    return settings
