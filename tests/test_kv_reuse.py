"""The hf policy reads each turn's prompt only past what it kept from earlier turns, and plays the
very episodes a full re-read plays (tiny random-weight Qwen3, whose template rewrites history)."""

import datetime as dt
import json

import pytest

from hindsight.corpus import Corpus
from hindsight.policy.hf import HFPolicy
from hindsight.policy.kv_reuse import (
    CACHE_ARGUMENT,
    KVReuse,
    Prefix,
    lay_out,
    plain_layers,
    returned_cache,
)
from hindsight.protocol import ProtocolConfig
from hindsight.runner import run_episodes
from hindsight.schema import Task
from tests.helpers import keyed, random_papers


def play(tiny_model, tmp_path, reuse: bool, batch_size: int):
    from hindsight.search.bm25 import BM25Backend

    tasks = [Task(f"t{i}", "graph attention for robots " * (1 + i), dt.date(2021, 1, 1)) for i in range(3)]
    policy = HFPolicy(str(tiny_model), max_new_tokens=16, reuse_cache=reuse)
    out = tmp_path / f"reuse-{reuse}-batch-{batch_size}"
    run_episodes(
        policy,
        keyed(tasks),
        BM25Backend(Corpus(random_papers(100))),
        ProtocolConfig(budget=5, max_malformed=5),
        out,
        batch_size=batch_size,
        progress=False,
    )
    rows = [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines()]
    return {row["instance_id"]: row["messages"] for row in rows}, policy.usage


@pytest.mark.parametrize("batch_size", [1, 3])
def test_kept_keys_values_play_the_same_episodes_reading_a_fraction_of_the_tokens(tiny_model, tmp_path, batch_size):
    reread, reread_usage = play(tiny_model, tmp_path, reuse=False, batch_size=batch_size)
    reused, reused_usage = play(tiny_model, tmp_path, reuse=True, batch_size=batch_size)
    assert reused == reread
    assert all(len(messages) >= 8 for messages in reused.values())  # several turns each, so there was history
    assert reread_usage["read_tokens"] == reread_usage["prompt_tokens"] == reused_usage["prompt_tokens"]
    assert reused_usage["read_tokens"] * 3 < reused_usage["prompt_tokens"]


def test_rows_with_kept_prefixes_of_different_lengths_get_the_logits_of_a_full_read(tiny_model):
    import torch
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(tiny_model).eval()
    prompts = [list(range(5, 40)), list(range(100, 112)), list(range(7, 30))]

    def prefix(ids):
        with torch.no_grad():
            layers = plain_layers(returned_cache(model(input_ids=torch.tensor([ids]), use_cache=True)))
        return Prefix(ids, [(k[0], v[0]) for k, v in layers])

    kept = [prefix(prompts[0][:20]), None, prefix(prompts[2][:3])]
    batch = lay_out(kept, prompts, pad_id=0, device="cpu")
    with torch.no_grad():
        spliced = model(
            input_ids=batch.input_ids[:, batch.cache.get_seq_length() :],
            attention_mask=batch.attention_mask,
            **{CACHE_ARGUMENT: batch.cache},
            position_ids=(batch.attention_mask.cumsum(-1) - 1).clamp(min=0)[:, batch.cache.get_seq_length() :],
        )
        for row, prompt in enumerate(prompts):
            full = model(input_ids=torch.tensor([prompt])).logits[0, -1]
            assert torch.allclose(spliced.logits[row, -1], full, atol=1e-4), row


def test_a_kept_prefix_is_cut_where_the_new_prompt_parts_from_it():
    import torch

    reuse = KVReuse()
    layers = [(torch.arange(5.0).view(1, 5, 1), torch.arange(5.0).view(1, 5, 1))]
    reuse.keep([1], [Prefix([10, 11, 12, 13, 14], layers)])
    rewritten, repeated, unknown = reuse.prefixes([1, 1, 2], [[10, 11, 99, 13, 14, 15], [10, 11, 12, 13, 14], [7, 8]])
    assert rewritten.ids == [10, 11] and rewritten.layers[0][0].shape == (1, 2, 1)
    assert repeated.ids == [10, 11, 12, 13]  # one token is always left to read
    assert unknown is None


def test_finished_conversations_let_their_keys_values_go():
    reuse = KVReuse()
    reuse.keep([1, 2], [Prefix([1], []), Prefix([2], [])])
    reuse.prefixes([2], [[2, 3]])
    assert list(reuse.kept) == [2]
