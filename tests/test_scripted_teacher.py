"""The scripted teacher on its own: its demonstrations must not depend on the interpreter."""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# Two surfaced papers; the first shares three private words whose idf values sum to 1.0 only when
# added exactly (1e16 + 1 - 1e16), which a plain float sum over a set gets right for some hash
# seeds and not others. It scores 1.0 / sqrt(4) = 0.5, the second 0.6 / sqrt(2) = 0.42: both clear
# half the best and are forwarded in the order shown; a wrong sum would drop the first.
RANK_TWO_HITS = """
import json
from hindsight.distill.prompts import PRIVATE_HEADER
from hindsight.distill.scripted_teacher import ScriptedTeacher
from hindsight.policy.base import Conversation
from hindsight.schema import Task
from hindsight.search.text import analyze
import datetime as dt

term = lambda word: analyze(word)[0]
idf = {term("alpha"): 1e16, term("beta"): 1.0, term("gamma"): -1e16, term("delta"): 0.6}
system = f"{PRIVATE_HEADER}\\n1. [T3/method] alpha beta gamma\\n   Abstract: alpha beta gamma delta"
results = {"results": [{"id": "2101.00002", "title": "delta"}, {"id": "2101.00001", "title": "alpha beta gamma"}]}
messages = [{"role": "system", "content": system}, {"role": "user", "content": "brief"},
            {"role": "tool", "content": json.dumps(results)}]
conv = Conversation(Task("t", "brief", dt.date(2022, 1, 1)), messages)
print(json.dumps(ScriptedTeacher(idf)._ranked(conv)))
"""


def test_the_submission_order_does_not_depend_on_the_hash_seed():
    orders = set()
    for seed in range(8):
        env = {**os.environ, "PYTHONHASHSEED": str(seed)}
        out = subprocess.run([sys.executable, "-c", RANK_TWO_HITS], cwd=ROOT, env=env, capture_output=True,
                             text=True, check=True).stdout
        orders.add(tuple(paper["id"] for paper in json.loads(out)))
    assert orders == {("2101.00002", "2101.00001")}
