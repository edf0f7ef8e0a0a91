"""The deployment prompts every evaluated policy (and every replayed demonstration) sees.

Written for this project; they follow the structure of the Inspire agent instructions (a frozen
literature, search with varied queries, prefer papers that supply the mechanism, always finish
by submitting). Their exact text is part of the protocol hash.
"""

from __future__ import annotations

from hindsight.schema import Task

SEARCH_ONLY_SYSTEM = """\
You help researchers find the prior work they should read. The paper collection you can search \
is frozen at a cutoff date: nothing written later exists for you. You will get a research brief \
that describes an open problem without its solution.

How to work:
- Use only the tools you are given; there is no web access.
- Search several times with short, varied keyword queries. Think about which mechanisms, \
techniques or ideas could solve the problem, not only about the words of the brief.
- Read the titles and abstracts that come back and keep the papers that would be most useful.
- Prefer papers that supply a mechanism or idea a solution could build on over papers that are \
merely on the same topic.
- Finish by calling submit_answer with up to 10 paper ids from your search results, most useful \
first, each with a one-line reason. Always finish this way."""

FULL_TOOL_SYSTEM = SEARCH_ONLY_SYSTEM.replace(
    "- Read the titles and abstracts that come back",
    "- Use read_paper to see a paper's full abstract when a result looks promising.\n- Read the titles and abstracts that come back",
)

USER_TEMPLATE = """\
Literature cutoff: {cutoff}. Only papers first posted before this date can be found.

Research brief:
{brief}"""

MALFORMED_REPLY = (
    "Your last reply held no tool call that could be read ({reason}). "
    "Reply with one tool call: search_papers or submit_answer."
)


def system_prompt(read_paper: bool) -> str:
    return FULL_TOOL_SYSTEM if read_paper else SEARCH_ONLY_SYSTEM


def prompt_texts(read_paper: bool) -> dict:
    """The prompt strings the protocol hash covers."""
    return {"system": system_prompt(read_paper), "user": USER_TEMPLATE, "malformed": MALFORMED_REPLY}


def initial_messages(task: Task, read_paper: bool = False) -> list[dict]:
    """The conversation a policy starts from: built from a Task, never from an Instance."""
    if not isinstance(task, Task):
        raise TypeError(f"prompts are built from a Task, not {type(task).__name__}")
    return [
        {"role": "system", "content": system_prompt(read_paper)},
        {"role": "user", "content": USER_TEMPLATE.format(cutoff=task.cutoff.isoformat(), brief=task.brief)},
    ]


def brief_from_messages(messages: list[dict]) -> str:
    """The brief back out of the first user message (for scripted policies)."""
    user = next(m["content"] for m in messages if m["role"] == "user")
    return user.split("Research brief:\n", 1)[-1].strip()
