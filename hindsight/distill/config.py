"""The recipe's `distill` section."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from hindsight.config import from_mapping
from hindsight.stages import DISTILL_DIR, DistillOutput


@dataclass(frozen=True)
class DistillConfig:
    out_dir: str = DISTILL_DIR  # candidates/, replays.jsonl, sft.jsonl, manifests (DistillOutput)
    teacher: str = "scripted"  # scripted, or a policy backend: litellm, hf, vllm
    model: str | None = None  # the teacher model (litellm string, hub id or path)
    scripted_searches: int = 4  # the scripted teacher's searches, its opening one included
    scripted_opening_at: int = 0  # where its opening search (the brief's first sentence) comes: 0 first
    scripted_anchor_words: int = 0  # brief words (those the antecedents share most) its first keyword query starts with
    api_base: str | None = None  # litellm teacher: an OpenAI-compatible server
    temperature: float = 0.7  # candidates must differ: sample
    candidates: int = 4  # K trajectories per target, seeds seed..seed+K-1
    seed: int = 0  # the first candidate's sampling seed
    private_max: int = 12  # antecedents in the private block
    abstract_chars: int = 1200  # each private abstract is cut to this many characters
    ngram: int = 5  # shared normalised n-gram length that flags private copying
    title_share: float = 0.6  # share of a private title's words that the queries may not spell out
    retrieval_words: int | None = (
        4  # second line: flag assistant text of this many content words whose best match in the index is an unsurfaced private paper (null: off)
    )
    unreadable_words: int | None = (
        3  # third line: flag assistant text with this many words neither English, the corpus's nor the episode's, or made mostly of signs (null: off)
    )
    keep_rationales: bool = (
        False  # a row keeps each submitted paper's rationale (judged by the text lines); default: ids only
    )
    keep_quantile: float = 0.5  # the threshold keeps this share of dev candidates (flag-free)
    max_rejected_share: float = 0.05  # selection fails if the leak audit drops more of the rows than this
    leak_retries: int = 2  # a teacher reply that would leak is refused and asked again this often (0: off)
    splits: tuple[str, ...] = ("train", "dev")  # the splits the teacher runs on (dev freezes the threshold)
    max_targets: int | None = None  # per split, the earliest N (a pilot run)
    batch_size: int = 32  # episodes in progress at once
    concurrency: int = 8  # teacher requests in flight (litellm)

    @property
    def output(self) -> DistillOutput:
        return DistillOutput(Path(self.out_dir))

    @classmethod
    def from_recipe(cls, recipe) -> DistillConfig:
        return from_mapping(cls, recipe.stages.get("distill"), f"{recipe.path}: distill")


def recipe_summary(recipe) -> str:
    """For `hindsight validate`: the distill section read and checked, and what it would write."""
    cfg = DistillConfig.from_recipe(recipe)
    return f"teacher {cfg.teacher} ×{cfg.candidates} → {cfg.out_dir}"
