"""A synthetic literature for demos and tests: `python -m hindsight.data.world --out DIR --seed 0`.

It is a simulation, built so that the phenomenon hindsight SFT exploits holds by construction:
the mechanism a problem needs does not share the problem's vocabulary.

- Vocabulary is made of invented words in disjoint groups: 12 problem areas, each with 4
  subproblems; 8 mechanism families, each with 4 variants; plus ordinary research English.
- Each area favours one mechanism family, and each subproblem one variant of that family
  (its *line*); each subproblem is also studied with 3 variants of other families.
- Key papers of each (subproblem, variant) line and method papers of each variant are dense in
  their words; ~14,000 background papers mix topics thinly.
- Lines keep publishing, more as they grow (24 papers a line, their dates denser in later
  years), and their vocabulary consolidates: a later paper uses its line's words more densely,
  so a search of a line's words puts its newest papers before the cutoff first.
- A target is a later paper of a subproblem's favoured line. Its graded antecedents are the
  newest earlier papers: T3 key papers of the same line (same problem, same mechanism), T2
  method papers of the same variant (same mechanism, other problems), T1 key papers of the
  subproblem's other lines (same problem, other mechanisms). Splits are by date, so an eval
  target's antecedents are mostly newer than every training target's: an id learned by heart
  from a demonstration is rarely worth anything at evaluation (5% of eval gain in world-2,
  against 76% in world-1, where every line had six papers), while the queries learned still
  find the new papers.
- The brief names the area and subproblem in ordinary research language and never a mechanism
  word. Searching the brief's words mostly finds T1 papers; a policy that has learned from
  training targets which variant a subproblem calls for can search for it and find T3 and T2.

What it does not show: anything about real papers, real briefs or real models' knowledge.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import random
import time
from dataclasses import dataclass
from pathlib import Path

from hindsight.data.native import months_before, split_by_date
from hindsight.schema import Instance, Label, Paper, Target

WORLD_VERSION = "world-2"
AREAS, SUBS, FAMILIES, VARIANTS, WORDS_PER_GROUP = 12, 4, 8, 4, 5
KEY_PAPERS_PER_LINE, METHOD_PAPERS_PER_VARIANT, OTHER_LINES = 24, 24, 3
LINE_GROWTH, MATURITY_FLOOR = 2.0, 0.4
TOTAL_PAPERS, TARGETS = 20_000, 600
START, END, LINES_END = dt.date(2015, 1, 1), dt.date(2025, 6, 30), dt.date(2025, 3, 31)
TARGETS_FROM = dt.date(2021, 1, 1)

GENERIC = (
    "approach method framework model analysis evaluation experiments results benchmark data "
    "performance accuracy efficiency robustness scalability setting task problem study design "
    "baseline improvement training inference structure signal representation objective "
    "estimation prediction system pipeline variant component algorithm theory practice"
).split()
SYLLABLES = (
    "ka ze lo mi tu ra ve no si pa qu dro fen gal hor jin kel mor nat pel rix sor tav ul "
    "vin wex yor zan bri cla dun esk fim gor hul"
).split()
ENDINGS = "k x z v q"


@dataclass(frozen=True)
class Topic:
    area: int
    sub: int  # global subproblem index: area * SUBS + local index
    family: int
    variant: int  # global variant index: family * VARIANTS + local index


class Vocabulary:
    """Invented words, disjoint across every group (checked after stemming)."""

    def __init__(self, rng: random.Random):
        from hindsight.search.text import analyze

        made: list[str] = []
        seen_stems: set[str] = set(analyze(" ".join(GENERIC)))
        groups = AREAS + AREAS * SUBS + FAMILIES + FAMILIES * VARIANTS
        while len(made) < groups * WORDS_PER_GROUP:
            word = "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 3))) + rng.choice(ENDINGS.split())
            stems = analyze(word)
            if len(stems) == 1 and stems[0] not in seen_stems:
                seen_stems.add(stems[0])
                made.append(word)
        chunks = [made[i : i + WORDS_PER_GROUP] for i in range(0, len(made), WORDS_PER_GROUP)]
        self.area = chunks[:AREAS]
        self.sub = chunks[AREAS : AREAS + AREAS * SUBS]
        rest = chunks[AREAS + AREAS * SUBS :]
        self.family, self.variant = rest[:FAMILIES], rest[FAMILIES:]

    def mechanism_words(self, topic: Topic) -> list[str]:
        return self.family[topic.family] + self.variant[topic.variant]


class World:
    def __init__(self, seed: int = 0):
        self.seed = seed
        self.rng = random.Random(seed)
        self.vocab = Vocabulary(self.rng)
        families = list(range(FAMILIES))
        self.favoured_family = [families[i % FAMILIES] for i in self.rng.sample(range(AREAS), AREAS)]
        self.line_variant = [
            self.favoured_family[s // SUBS] * VARIANTS + self.rng.randrange(VARIANTS) for s in range(AREAS * SUBS)
        ]
        self.other_variants = [self._other_variants(s) for s in range(AREAS * SUBS)]

    def _other_variants(self, sub: int) -> list[int]:
        favoured = self.favoured_family[sub // SUBS]
        others = self.rng.sample([f for f in range(FAMILIES) if f != favoured], OTHER_LINES)
        return [f * VARIANTS + self.rng.randrange(VARIANTS) for f in others]

    # -- text --------------------------------------------------------------------------------

    def _date(self, start: dt.date = START, end: dt.date = END) -> dt.date:
        return start + dt.timedelta(days=self.rng.randrange((end - start).days + 1))

    def _line_date(self) -> dt.date:
        # A line publishes more as it grows: the density of its dates rises with time.
        span = (LINES_END - START).days
        return START + dt.timedelta(days=int(span * self.rng.random() ** (1 / LINE_GROWTH)))

    def _matured(self, weights: tuple[int, int], date: dt.date) -> tuple[int, int]:
        # A line's vocabulary consolidates: later papers use its words more densely, so a search
        # of a line's words ranks its newest papers before the cutoff first.
        progress = (date - START).days / (LINES_END - START).days
        scale = MATURITY_FLOOR + (1 - MATURITY_FLOOR) * progress
        return round(weights[0] * scale), round(weights[1] * scale)

    def _pick(self, words: list[str], n: int) -> list[str]:
        return [self.rng.choice(words) for _ in range(n)]

    def _text(self, topic: Topic, problem_weight: int, mechanism_weight: int, n_words: int = 80) -> tuple[str, str]:
        v = self.vocab
        problem = v.area[topic.area] + v.sub[topic.sub] * 2
        mechanism = v.family[topic.family] + v.variant[topic.variant] * 2
        title = self._pick(v.sub[topic.sub], 2) + self._pick(v.variant[topic.variant], 2) + self._pick(GENERIC, 2)
        self.rng.shuffle(title)
        body = (
            self._pick(problem, problem_weight)
            + self._pick(mechanism, mechanism_weight)
            + self._pick(GENERIC, max(0, n_words - problem_weight - mechanism_weight))
        )
        self.rng.shuffle(body)
        sentences = [" ".join(body[i : i + 12]) for i in range(0, len(body), 12)]
        return " ".join(title).capitalize(), ". ".join(s.capitalize() for s in sentences) + "."

    def _paper(self, topic: Topic, date: dt.date, kind: str, problem_weight: int, mechanism_weight: int) -> dict:
        title, abstract = self._text(topic, problem_weight, mechanism_weight)
        return {"topic": topic, "date": date, "kind": kind, "title": title, "abstract": abstract}

    def brief(self, topic: Topic, terse: bool = False) -> str:
        a = self.rng.sample(self.vocab.area[topic.area], 3)
        s = self.rng.sample(self.vocab.sub[topic.sub], 5)
        sentences = [
            f"We work on {s[0]} {s[1]} problems in {a[0]} {a[1]} systems.",
            f"Existing {a[2]} pipelines handle {s[2]} poorly, and their accuracy drops when {s[3]} data is scarce.",
            f"We want an approach whose {s[4]} estimates stay reliable at scale, with an evaluation on standard benchmarks.",
            "Which earlier papers should we study before tackling this?",
        ]
        return " ".join(sentences[:2] + sentences[3:] if terse else sentences)

    # -- the world ---------------------------------------------------------------------------

    def build(self) -> tuple[list[Paper], list[Instance]]:
        drafts = []
        lines: dict[tuple[int, int], list[dict]] = {}
        for sub in range(AREAS * SUBS):
            area = sub // SUBS
            for variant in [self.line_variant[sub], *self.other_variants[sub]]:
                topic = Topic(area, sub, variant // VARIANTS, variant)
                # The favoured line's papers are about their mechanism first; the other lines'
                # papers are about the problem first (so problem words find them more easily).
                weights = (5, 14) if variant == self.line_variant[sub] else (12, 6)
                dates = [self._line_date() for _ in range(KEY_PAPERS_PER_LINE)]
                papers = [self._paper(topic, date, "key", *self._matured(weights, date)) for date in dates]
                lines[(sub, variant)] = papers
                drafts += papers
        methods: dict[int, list[dict]] = {}
        for variant in range(FAMILIES * VARIANTS):
            methods[variant] = []
            for _ in range(METHOD_PAPERS_PER_VARIANT):
                area = self.rng.randrange(AREAS)
                topic = Topic(area, area * SUBS + self.rng.randrange(SUBS), variant // VARIANTS, variant)
                date = self._line_date()
                methods[variant].append(self._paper(topic, date, "method", *self._matured((3, 14), date)))
            drafts += methods[variant]
        targets = []
        for _ in range(TARGETS):
            sub = self.rng.randrange(AREAS * SUBS)
            variant = self.line_variant[sub]
            targets.append(
                self._paper(
                    Topic(sub // SUBS, sub, variant // VARIANTS, variant),
                    self._date(TARGETS_FROM, END),
                    "target",
                    10,
                    10,
                )
            )
        drafts += targets
        while len(drafts) < TOTAL_PAPERS:
            sub, variant = self.rng.randrange(AREAS * SUBS), self.rng.randrange(FAMILIES * VARIANTS)
            drafts.append(
                self._paper(Topic(sub // SUBS, sub, variant // VARIANTS, variant), self._date(), "background", 3, 3)
            )
        papers = self._assign_ids(drafts)
        instances = [self._instance(t, lines, methods) for t in sorted(targets, key=lambda d: (d["date"], d["id"]))]
        instances = [inst for inst in instances if inst is not None]
        return papers, split_by_date(instances)

    def _assign_ids(self, drafts: list[dict]) -> list[Paper]:
        drafts.sort(key=lambda d: (d["date"], d["title"], d["abstract"]))
        serial: dict[str, int] = {}
        papers = []
        for draft in drafts:
            month = f"{draft['date']:%y%m}"
            serial[month] = serial.get(month, 0) + 1
            draft["id"] = f"{month}.{serial[month]:05d}"
            papers.append(
                Paper(
                    id=draft["id"],
                    title=draft["title"],
                    date=draft["date"],
                    abstract=draft["abstract"],
                    categories=("synthetic",),
                )
            )
        return papers

    def _instance(self, target: dict, lines: dict, methods: dict) -> Instance | None:
        topic: Topic = target["topic"]
        cutoff = months_before(target["date"], 3)

        def latest(papers: list[dict], n: int) -> list[dict]:
            return sorted((p for p in papers if p["date"] < cutoff), key=lambda p: (p["date"], p["id"]))[-n:]

        graded = [("T3", p) for p in latest(lines[(topic.sub, topic.variant)], 3)]
        graded += [("T2", p) for p in latest(methods[topic.variant], 2)]
        graded += [("T1", p) for v in self.other_variants[topic.sub] for p in latest(lines[(topic.sub, v)], 1)]
        labels = tuple(
            Label(
                id=p["id"],
                tier=tier,
                role="conceptual",
                gain={"T1": 1.0, "T2": 3.0, "T3": 7.0}[tier],
                title=p["title"],
                abstract=p["abstract"],
                date=p["date"],
            )
            for tier, p in graded
        )
        if len(labels) < 2:
            return None
        return Instance(
            id=f"world-{target['id']}",
            split="train",
            brief=self.brief(topic),
            brief_terse=self.brief(topic, terse=True),
            cutoff=cutoff,
            target=Target(id=target["id"], title=target["title"], date=target["date"]),
            labels=labels,
            audit={
                "flagged": False,
                "synthetic": True,
                "area": topic.area,
                "subproblem": topic.sub,
                "variant": topic.variant,
            },
        )


def write_world(out: str | Path, seed: int = 0) -> dict:
    """Generate the world for `seed` into `out` (instances.jsonl, corpus.jsonl, world.json)."""
    start = time.perf_counter()
    papers, instances = World(seed).build()
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "corpus.jsonl", "w", encoding="utf-8") as handle:
        handle.writelines(json.dumps(p.to_dict(), ensure_ascii=False) + "\n" for p in papers)
    with open(out / "instances.jsonl", "w", encoding="utf-8") as handle:
        handle.writelines(json.dumps(i.to_dict(), ensure_ascii=False) + "\n" for i in instances)
    splits = {s: sum(i.split == s for i in instances) for s in ("train", "dev", "eval")}
    info = {
        "version": WORLD_VERSION,
        "seed": seed,
        "papers": len(papers),
        "instances": len(instances),
        "splits": splits,
        "seconds": round(time.perf_counter() - start, 2),
    }
    (out / "world.json").write_text(json.dumps(info, indent=2) + "\n")
    return info


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m hindsight.data.world", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    info = write_world(args.out, args.seed)
    print(
        f"wrote {args.out}: {info['papers']:,} papers, {info['instances']} instances "
        f"(train {info['splits']['train']}, dev {info['splits']['dev']}, eval {info['splits']['eval']}) "
        f"in {info['seconds']}s"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
