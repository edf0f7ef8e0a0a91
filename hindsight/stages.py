"""What one stage leaves for the next, defined once: the distillation folder's layout and the
trained student's manifest. Stages never import each other; they meet here."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from hindsight.errors import UserError
from hindsight.jsonl import read_jsonl

DISTILL_DIR = "outputs/distill"  # the recipe's distill.out_dir unless it says otherwise
STUDENT_MANIFEST = "train_manifest.json"


@dataclass(frozen=True)
class DistillOutput:
    root: Path

    @classmethod
    def of_recipe(cls, recipe) -> DistillOutput:
        return cls(Path((recipe.stages.get("distill") or {}).get("out_dir", DISTILL_DIR)))

    candidates = property(lambda self: self.root / "candidates")  # teacher: one run per shard
    replays = property(lambda self: self.root / "replays.jsonl")  # replay validator
    flags = property(lambda self: self.root / "flags.json")
    selection = property(lambda self: self.root / "selection.json")  # the frozen dev threshold
    sft_set = property(lambda self: self.root / "sft.jsonl")  # what train reads
    naive_sft_set = property(lambda self: self.root / "naive_sft.jsonl")
    format_sft_set = property(lambda self: self.root / "format_sft.jsonl")  # the format control's rows
    audit = property(lambda self: self.root / "audit.json")
    candidates_manifest = property(lambda self: self.root / "candidates_manifest.jsonl")

    def demonstrated_targets(self) -> set[str]:
        """The targets whose candidate the selection kept: those an SFT student trained on this
        folder's sft.jsonl has seen solved (candidates_manifest.jsonl, written by the selection)."""
        return self._manifest_targets(kept_only=True)

    def distilled_targets(self) -> set[str]:
        """Every target the teacher proposed a candidate for, kept or not: the targets whose
        antecedents the teacher saw (candidates_manifest.jsonl, written by the selection)."""
        return self._manifest_targets(kept_only=False)

    def _manifest_targets(self, kept_only: bool) -> set[str]:
        path = self.candidates_manifest
        if not path.exists():
            raise UserError(f"{path} does not exist: run the distillation's selection (distill/select_demos.py) first")
        targets = set()
        for line_no, record, problem in read_jsonl(path):
            try:
                if problem:
                    raise ValueError(problem)
                if record["selected"] or not kept_only:
                    targets.add(str(record["source_instance"]))
            except (ValueError, KeyError, TypeError) as exc:
                raise UserError(f"{path}:{line_no}: not a candidate record ({exc})") from None
        return targets


@dataclass(frozen=True)
class StudentManifest:
    """The part of <train.output_dir>/train_manifest.json that evaluation relies on."""

    path: Path
    base_model: str
    lora: bool  # an adapter for base_model, or a fully fine-tuned model
    output: Path  # <output_dir>/adapter or <output_dir>/model
    enable_thinking: bool | None
    history: str | None  # how earlier turns were rendered (hindsight.policy.chat.HISTORY_RENDERING)
    chat_template_hash: str | None
    gguf_sha256: str | None

    @staticmethod
    def write(output_dir: str | Path, record: dict) -> Path:
        path = Path(output_dir) / STUDENT_MANIFEST
        path.write_text(json.dumps(record, indent=2, default=str) + "\n")
        return path

    @classmethod
    def read(cls, output_dir: str | Path) -> StudentManifest:
        path = Path(output_dir) / STUDENT_MANIFEST
        if not path.exists():
            raise FileNotFoundError(f"{path} does not exist: a student is the output_dir of train/sft.py")
        record = json.loads(path.read_text())
        try:
            return cls(
                path=path,
                base_model=record["base_model"],
                lora=bool(record["hyperparameters"].get("lora")),
                # the folder may have moved since training: the output is found beside the manifest
                output=Path(output_dir) / Path(record["output"]).name,
                enable_thinking=record.get("enable_thinking"),
                history=record.get("history"),
                chat_template_hash=record.get("chat_template_hash"),
                gguf_sha256=record.get("gguf_sha256"),
            )
        except KeyError as exc:
            raise UserError(f"{path}: no {exc.args[0]!r}; was it written by train/sft.py?") from None


def student_record(
    base_model: str, revision: str | None, provenance: dict, output: Path, tokenizer, enable_thinking: bool | None
) -> dict:
    """What every trained student's manifest says of its model, tokenizer and rendering (SFT and
    RL alike): the part `StudentManifest.read` and evaluation's checks rely on."""
    from hindsight.policy.chat import HISTORY_RENDERING
    from hindsight.provenance import text_hash

    return {
        "base_model": base_model,
        "revision": revision,
        **provenance,
        "output": str(output),
        "tokenizer_hash": text_hash(json.dumps(tokenizer.get_vocab(), sort_keys=True)),
        "chat_template_hash": text_hash(tokenizer.chat_template),
        "enable_thinking": enable_thinking,
        "history": HISTORY_RENDERING,
    }


class SFTSetError(UserError):
    pass


@dataclass(frozen=True)
class SFTRow:
    """One demonstration as the trainer reads it (`datasets`-loadable JSON Lines): the deployment
    transcript, assistant turns with structured `tool_calls`, and the tool schemas."""

    messages: list[dict]
    tools: list[dict] | None = None

    def to_line(self) -> str:
        return json.dumps({"messages": self.messages, "tools": self.tools}, ensure_ascii=False) + "\n"


def read_sft_set(path: str | Path) -> list[SFTRow]:
    rows = []
    with open(path, encoding="utf-8") as handle:
        for line_no, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise SFTSetError(f"{path}:{line_no}: not valid JSON ({exc.msg})") from None
            if not isinstance(row, dict) or not isinstance(row.get("messages"), list):
                raise SFTSetError(f"{path}:{line_no}: a row needs a 'messages' list")
            rows.append(SFTRow(row["messages"], row.get("tools")))
    if not rows:
        raise SFTSetError(f"{path}: no rows")
    return rows
