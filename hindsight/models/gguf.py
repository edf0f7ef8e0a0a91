"""GGUF files as models: wherever a model is named (`policy.model`, `train.base_model`, a
teacher), a local `.gguf` file works.

The file is dequantised once into a plain safetensors folder under
`$HINDSIGHT_CACHE/gguf/<sha256 of the file>/`, so the trainer and the evaluator load the very
same float weights, and every manifest can name the file by its hash. Loading needs the `gguf`
package (in the `hf` and `train` extras).

    python -m hindsight.models.gguf FILE.gguf     # convert now, print the folder
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from hindsight.jsonl import sha256_file
from hindsight.log import get_logger
from hindsight.models.cache import cache_root as models_cache
from hindsight.models.cache import publish

logger = get_logger(__name__)

SOURCE_FILE = "gguf_source.json"  # written last: a folder without it is an unfinished conversion


def is_gguf(name: str | os.PathLike | None) -> bool:
    return name is not None and str(name).lower().endswith(".gguf")


def cache_root() -> Path:
    return models_cache("gguf")


def gguf_sha256(path: str | os.PathLike) -> str:
    """The file's sha256, remembered beside the converted folder's index by size and mtime, so a
    multi-GB file is read once, not at every load."""
    path = Path(path).expanduser()
    stat = path.stat()
    memo = cache_root() / "hashes.json"
    key = f"{path.resolve()}:{stat.st_size}:{stat.st_mtime_ns}"
    known = json.loads(memo.read_text()) if memo.exists() else {}
    if key not in known:
        known[key] = sha256_file(path)
        memo.parent.mkdir(parents=True, exist_ok=True)
        tmp = memo.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(known, indent=1))
        tmp.replace(memo)
    return known[key]


def materialize(path: str | os.PathLike, dtype: str = "float32", progress: bool = True) -> Path:
    """The safetensors folder for a GGUF file, converting it on first use."""
    path = Path(path).expanduser()
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such GGUF file")
    digest = gguf_sha256(path)
    folder = cache_root() / digest
    if (folder / SOURCE_FILE).exists():
        return folder
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    if progress:
        logger.info(f"dequantising {path.name} (sha256 {digest[:12]}) into {folder} — once per file")
    try:
        tokenizer = AutoTokenizer.from_pretrained(path.parent, gguf_file=path.name)
        model = AutoModelForCausalLM.from_pretrained(path.parent, gguf_file=path.name, dtype=getattr(torch, dtype))
    except ImportError as exc:
        raise ImportError(f"{path}: loading a GGUF file needs the `gguf` package (pip install gguf): {exc}") from None
    if getattr(model, "hf_quantizer", None) is not None:
        model.hf_quantizer.remove_quantization_config(model)  # save_pretrained refuses a GGUF-loaded model otherwise

    def write(tmp: Path) -> None:
        model.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        (tmp / SOURCE_FILE).write_text(
            json.dumps({"file": str(path.resolve()), "sha256": digest, "dtype": dtype}, indent=2)
        )

    return publish(folder, SOURCE_FILE, write)


def resolve_model(name: str | None) -> str | None:
    """A loadable model name: a GGUF file becomes its converted folder; anything else is returned as is."""
    return str(materialize(name)) if is_gguf(name) else name


def model_provenance(name: str | None) -> dict:
    """What a manifest records to pin a GGUF model: its file's sha256 (empty for other models)."""
    return {"gguf_sha256": gguf_sha256(name)} if is_gguf(name) and Path(name).expanduser().is_file() else {}


def main(argv: list[str] | None = None) -> int:
    from hindsight.log import cli_logging

    cli_logging()
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m hindsight.models.gguf",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("file", help="a .gguf model file")
    parser.add_argument("--dtype", default="float32", choices=["float32", "bfloat16", "float16"])
    args = parser.parse_args(argv)
    try:
        print(materialize(args.file, args.dtype))
    except (FileNotFoundError, ImportError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
