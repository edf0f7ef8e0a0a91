"""The demo's tiny student: paper ids as two tokens, and learning to copy before any task."""

import pytest

from hindsight.models.tiny import build_tiny_qwen, id_pieces, teach_copying
from tests.helpers import random_papers

pytestmark = pytest.mark.slow


def test_id_pieces_split_head_and_tail():
    assert id_pieces(["2401.00017", "2401.00018", "cs/0112017"]) == {"2401.", "00017", "00018", "cs/0112017"}


def test_with_id_tokens_an_id_is_two_tokens_and_round_trips(tmp_path):
    from transformers import AutoTokenizer

    papers = random_papers(200, seed=3)
    path = build_tiny_qwen(tmp_path / "m", [p.title for p in papers], id_tokens=[p.id for p in papers])
    tokenizer = AutoTokenizer.from_pretrained(path)
    for paper in papers[:20]:
        text = f'{{"id": "{paper.id}"}}'
        ids = tokenizer(text, add_special_tokens=False)["input_ids"]
        assert tokenizer.decode(ids) == text
        assert len(tokenizer.tokenize(paper.id)) == 2


def test_teaching_to_copy_makes_a_random_model_copy_unseen_strings(tmp_path):
    import torch
    from transformers import AutoModelForCausalLM

    path = build_tiny_qwen(tmp_path / "m", [p.title for p in random_papers(200, seed=4)], hidden_size=64, layers=2)
    model = AutoModelForCausalLM.from_pretrained(path)

    def copy_accuracy() -> float:
        tokens = torch.randint(9, model.config.vocab_size, (16, 32), generator=torch.Generator().manual_seed(99))
        sequence = torch.cat([tokens, tokens], dim=1)
        with torch.no_grad():
            predicted = model(input_ids=sequence).logits[:, 32:-1].argmax(-1)
        return (predicted == sequence[:, 33:]).float().mean().item()

    before = copy_accuracy()
    losses = teach_copying(model, first_ordinary=9, steps=300, length=32, batch=16, log_every=0)
    after = copy_accuracy()
    assert before < 0.05 and after > 0.9, (before, after, losses[-1])
