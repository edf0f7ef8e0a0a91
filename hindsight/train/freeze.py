"""Full fine-tuning that leaves some tokens' embeddings as they were (`train.frozen_tokens`).

The demo's student learned to copy paper ids in a curriculum over the whole corpus; its
demonstrations then come from the training split, whose ids are older than the evaluation's.
Trained on them, a student with every weight free raised the output rows of the old ids'
pieces and wrote an id's month wrong where the result showed a newer one (309 of its 485
made-up ids had a shown tail under a head no search returned). Keeping those rows as the
curriculum left them kept the copying and still let the student learn where to search
(docs/experiments/demo-history.md).
"""

from __future__ import annotations

import re


def frozen_rows(tokenizer, pattern: str) -> list[int]:
    """The vocabulary rows whose token text matches `pattern` (re.search), in id order."""
    compiled = re.compile(pattern)
    return sorted(index for token, index in tokenizer.get_vocab().items() if compiled.search(token))


def freeze_token_rows(model, rows: list[int]) -> None:
    """Zero the gradient of `rows` of the input embeddings and of the LM head (one matrix when
    they are tied) before anything reads it: with no weight decay the optimizer then never
    moves them, and gradient clipping does not count them."""
    import torch

    weights = {
        id(module.weight): module.weight
        for module in (model.get_input_embeddings(), model.get_output_embeddings())
        if module is not None
    }
    for weight in weights.values():
        mask = torch.ones(weight.shape[0], 1, dtype=weight.dtype, device=weight.device)
        mask[rows] = 0
        weight.register_hook(lambda grad, mask=mask: grad * mask)
