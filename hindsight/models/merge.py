"""A LoRA adapter folded into its base model's weights: one plain model folder, served without
LoRA kernels.

vLLM's CPU build applies an adapter through PyTorch ops that gather each token's own copy of the
LoRA matrices, which costs most where the evaluation spends its time (prefilling every turn's new
context). Folding `W + (alpha / r) · B·A` into the weights once gives the same function with none
of that work (`policy.merge_adapter`). The folder is written once under
`$HINDSIGHT_CACHE/merged/<digest of base and adapter>/`, like a converted GGUF file.

    python -m hindsight.models.merge BASE_FOLDER ADAPTER_FOLDER     # merge now, print the folder
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
from pathlib import Path

from hindsight.log import get_logger
from hindsight.models.cache import cache_root, publish
from hindsight.provenance import folder_fingerprint

logger = get_logger(__name__)

SOURCE_FILE = "merged_source.json"  # written last: a folder without it is an unfinished merge
ADAPTER_WEIGHTS = "adapter_model.safetensors"
LORA_PREFIX = "base_model.model."


class MergeError(ValueError):
    """An adapter that cannot be folded into these weights (the message names the file and key)."""


def lora_scale(config: dict, where: Path) -> float:
    """alpha / r (alpha / sqrt(r) under rsLoRA); variants whose update is not B·A are refused."""
    for unsupported in ("use_dora", "layer_replication"):
        if config.get(unsupported):
            raise MergeError(f"{where}: {unsupported} adapters cannot be merged here")
    if config.get("rank_pattern") or config.get("alpha_pattern"):
        raise MergeError(f"{where}: per-module ranks or alphas (rank_pattern, alpha_pattern) are not supported")
    rank, alpha = int(config["r"]), float(config["lora_alpha"])
    return alpha / rank**0.5 if config.get("use_rslora") else alpha / rank


def lora_pairs(tensors: dict, where: Path) -> dict[str, tuple]:
    """{base weight name: (A, B)} from an adapter's tensors; anything but LoRA A/B pairs is refused."""
    pairs: dict[str, dict] = {}
    for key, tensor in tensors.items():
        for part in ("lora_A", "lora_B"):
            suffix = f".{part}.weight"
            if key.startswith(LORA_PREFIX) and key.endswith(suffix):
                module = key[len(LORA_PREFIX) : -len(suffix)]
                pairs.setdefault(f"{module}.weight", {})[part] = tensor
                break
        else:
            raise MergeError(f"{where}: tensor {key!r} is not a LoRA A/B matrix of a linear layer; cannot merge it")
    for name, pair in pairs.items():
        if set(pair) != {"lora_A", "lora_B"}:
            raise MergeError(f"{where}: {name} has {sorted(pair)} but not both lora_A and lora_B")
    return {name: (pair["lora_A"], pair["lora_B"]) for name, pair in pairs.items()}


def weight_files(base: Path) -> list[Path]:
    files = sorted(base.glob("*.safetensors"))
    if not files:
        raise MergeError(f"{base}: no .safetensors weights to merge into")
    return files


def merged_tensors(base: Path, adapter: Path) -> dict[str, dict]:
    """{weights file name: its tensors with the adapter folded in}, computed in float32."""
    import torch
    from safetensors.torch import load_file

    config = json.loads((adapter / "adapter_config.json").read_text())
    scale = lora_scale(config, adapter / "adapter_config.json")
    pairs = lora_pairs(load_file(adapter / ADAPTER_WEIGHTS), adapter / ADAPTER_WEIGHTS)
    out, done, changed = {}, set(), False
    for file in weight_files(base):
        tensors = load_file(file)
        for name in pairs.keys() & tensors.keys():
            down, up = (t.to(torch.float32) for t in pairs[name])
            weight = tensors[name]
            if weight.shape != (up.shape[0], down.shape[1]):
                raise MergeError(
                    f"{adapter}: {name} is {tuple(weight.shape)} in {file.name} but the adapter's B·A is "
                    f"{(up.shape[0], down.shape[1])}; the adapter was trained on another model"
                )
            update = scale * (up @ down)
            changed = changed or bool(update.abs().max() > 0)
            tensors[name] = (weight.to(torch.float32) + update).to(weight.dtype).contiguous()
            done.add(name)
        out[file.name] = tensors
    missing = sorted(pairs.keys() - done)
    if missing:
        raise MergeError(f"{adapter}: {len(missing)} adapted weights are not in {base} (first: {missing[0]})")
    if not changed:
        raise MergeError(f"{adapter}: the adapter changes no weight (every B·A is zero: an untrained adapter)")
    return out


def merge_source(base: Path, adapter: Path) -> dict:
    """What a merged folder is made of: both folders and their fingerprints (merged_source.json)."""
    return {
        "base": str(base.resolve()),
        "base_fingerprint": folder_fingerprint(base),
        "adapter": str(adapter.resolve()),
        "adapter_fingerprint": folder_fingerprint(adapter),
    }


def merge_digest(source: dict) -> str:
    parts = [source["base_fingerprint"] or source["base"], source["adapter_fingerprint"] or source["adapter"]]
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()


def merge_adapter(base: str | os.PathLike, adapter: str | os.PathLike) -> Path:
    """The folder of `base` (a local model folder) with `adapter` (a PEFT LoRA folder) folded in,
    made on first use; its merged_source.json names both and their fingerprints."""
    from safetensors.torch import save_file

    base, adapter = Path(base).expanduser(), Path(adapter).expanduser()
    for folder, what in ((base, "model"), (adapter, "adapter")):
        if not folder.is_dir():
            raise MergeError(f"{folder}: no such {what} folder (merging needs both on disk)")
    if not (adapter / ADAPTER_WEIGHTS).is_file():
        raise MergeError(f"{adapter}: no {ADAPTER_WEIGHTS}; not a PEFT LoRA adapter folder")
    source = merge_source(base, adapter)
    folder = cache_root("merged") / merge_digest(source)
    if (folder / SOURCE_FILE).exists():
        return folder
    logger.info(f"merging adapter {adapter} into {base} → {folder} (once per pair)")
    tensors = merged_tensors(base, adapter)

    def write(tmp: Path) -> None:
        for item in base.iterdir():  # config, tokenizer, generation settings: as the base has them
            if item.is_file() and item.suffix != ".safetensors" and item.name != "gguf_source.json":
                shutil.copy2(item, tmp / item.name)
        for name, file_tensors in tensors.items():
            save_file(file_tensors, tmp / name, metadata={"format": "pt"})
        (tmp / SOURCE_FILE).write_text(json.dumps(source, indent=2) + "\n")

    return publish(folder, SOURCE_FILE, write)


def main(argv: list[str] | None = None) -> int:
    import argparse

    from hindsight.log import cli_logging

    cli_logging()
    parser = argparse.ArgumentParser(
        prog="python -m hindsight.models.merge",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("base", help="a model folder (a GGUF file: its converted folder)")
    parser.add_argument("adapter", help="a PEFT LoRA adapter folder")
    args = parser.parse_args(argv)
    from hindsight.models.gguf import resolve_model

    try:
        print(merge_adapter(resolve_model(args.base), args.adapter))
    except (MergeError, FileNotFoundError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
