"""Briefs written by a model (`--briefs model=…` on the DeepScholar converter).

The model gets the target's title and up to 1,800 characters of its abstract, and is asked for
the problem as it stood before the paper: motivation, what earlier approaches lack, what a
solution should achieve, and nothing of the solution itself. Replies are cached on disk (the
litellm response cache), so a rerun costs nothing. The target's name and acronyms are then
removed by the same rule as the model-free briefs, and a target whose request fails keeps its
model-free brief (counted in the summary).
"""

from __future__ import annotations

from hindsight.errors import UserError

BRIEF_SYSTEM = """\
You turn a paper's abstract into a research brief for a literature-search benchmark. The brief \
describes the open problem as it stood before this paper existed: why it matters, where earlier \
approaches fall short, and what a good solution would need to do. It must not reveal how the paper \
solves it: leave out the paper's method name, its mechanism, and any result, dataset or benchmark \
that belongs to this paper. Write in the first person plural ("we want ..."), in 120 to 200 words, \
as plain prose with no title or list. End with a sentence asking which earlier papers we should study."""

ABSTRACT_CHARS = 1800


def brief_request(model: str, title: str, abstract: str, api_base: str | None = None, max_tokens: int = 400) -> dict:
    user = f"Title: {title}\n\nAbstract: {' '.join(abstract.split())[:ABSTRACT_CHARS]}"
    return {
        "model": model,
        "api_base": api_base,
        "temperature": 0.0,
        "max_tokens": max_tokens,
        "messages": [{"role": "system", "content": BRIEF_SYSTEM}, {"role": "user", "content": user}],
    }


def parse_options(spec: str) -> dict:
    """`model=openai/gpt-4.1,api_base=http://127.0.0.1:8000/v1,concurrency=8` as a dict
    (`api_key=…` for a local server that needs none; providers' keys come from the environment)."""
    options = {}
    for part in filter(None, (p.strip() for p in spec.split(","))):
        key, sep, value = part.partition("=")
        if not sep:
            raise UserError(f"--briefs: {part!r} is not key=value")
        options[key.strip()] = value.strip()
    if "model" not in options:
        raise UserError("--briefs needs model=<litellm model>")
    unknown = set(options) - {"model", "api_base", "api_key", "concurrency", "cache_dir", "max_tokens"}
    if unknown:
        raise UserError(f"--briefs: unknown option(s) {', '.join(sorted(unknown))}")
    return options


def write_briefs(targets: list[tuple[str, str, str]], options: dict) -> tuple[dict[str, str], dict[str, str]]:
    """Briefs for (id, title, abstract) targets: ({id: brief}, {id: failure})."""
    from hindsight.policy.litellm_backend import Completer

    completer = Completer(cache_dir=options.get("cache_dir"), api_key=options.get("api_key"))
    requests = [
        brief_request(options["model"], title, abstract, options.get("api_base"), int(options.get("max_tokens", 400)))
        for _, title, abstract in targets
    ]
    briefs, failures = {}, {}
    for (target_id, _, _), (data, failure, _) in zip(
        targets, completer.complete_all(requests, int(options.get("concurrency", 8)))
    ):
        text = ((data or {}).get("choices") or [{}])[0].get("message", {}).get("content") if data else None
        if failure or not text or not text.strip():
            failures[target_id] = failure or "empty reply"
        else:
            briefs[target_id] = " ".join(text.split())
    return briefs, failures
