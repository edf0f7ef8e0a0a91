"""Key/value reuse across an episode's turns for the transformers backend.

A turn's prompt is the previous prompt, the reply and the tool result: without reuse every turn
re-reads the whole conversation, and the cost of an episode grows with the square of its turns.
Each live conversation keeps the token ids the model has read and their keys and values; the next
turn reads only what follows the longest common prefix of those ids and the freshly rendered
prompt. Matching on ids, rather than trusting the template to only append, keeps the output that
of a full re-read when a template rewrites history or a reply re-tokenizes differently: the cache
is cut where the two part. A new conversation starts from the shared system prompt (and tool
schema), read once.

Rows of a batch keep caches of different lengths, so a batch is laid out as
`[pad][kept prefix][pad][new tokens]`: the attention mask hides both pads, and positions, which
generation counts from the mask, stay each conversation's own.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Prefix:
    ids: list[int]
    layers: list[tuple]  # per layer (keys, values), each [heads, len(ids), head_dim]

    def cut(self, length: int) -> Prefix:
        return Prefix(self.ids[:length], [(k[:, :length], v[:, :length]) for k, v in self.layers])


def common_length(a: list[int], b: list[int]) -> int:
    n = min(len(a), len(b))
    for i in range(n):
        if a[i] != b[i]:
            return i
    return n


@dataclass
class Batch:
    input_ids: object  # [rows, kept + new] long tensor
    attention_mask: object  # same shape; 0 on both pads
    cache: object | None  # a DynamicCache over the kept columns, or None when nothing is kept


def lay_out(prefixes: list[Prefix | None], prompts: list[list[int]], pad_id: int, device) -> Batch:
    import torch
    from transformers import DynamicCache

    kept = [len(p.ids) if p else 0 for p in prefixes]
    width_kept = max(kept)
    width_new = max(len(prompt) - n for prompt, n in zip(prompts, kept))
    ids, mask = [], []
    for prompt, n in zip(prompts, kept):
        new = prompt[n:]
        pad_kept, pad_new = width_kept - n, width_new - len(new)
        ids.append([pad_id] * pad_kept + prompt[:n] + [pad_id] * pad_new + new)
        mask.append([0] * pad_kept + [1] * n + [0] * pad_new + [1] * len(new))
    cache = None
    if width_kept:
        template = next(p for p in prefixes if p).layers
        layers = []
        for layer, (k0, v0) in enumerate(template):
            keys = k0.new_zeros((len(prompts), k0.shape[0], width_kept, k0.shape[2]))
            values = v0.new_zeros((len(prompts), v0.shape[0], width_kept, v0.shape[2]))
            for row, prefix in enumerate(prefixes):
                if prefix and prefix.ids:
                    keys[row, :, width_kept - len(prefix.ids) :] = prefix.layers[layer][0]
                    values[row, :, width_kept - len(prefix.ids) :] = prefix.layers[layer][1]
            layers.append((keys, values))
        cache = DynamicCache(ddp_cache_data=layers)
    return Batch(torch.tensor(ids, device=device), torch.tensor(mask, device=device), cache)


def _cache_argument() -> str:
    try:
        from transformers.generation.utils import GenerateDecoderOnlyOutput
    except ImportError:
        return "past_key_values"
    return "cache" if "cache" in GenerateDecoderOnlyOutput.__dataclass_fields__ else "past_key_values"


CACHE_ARGUMENT = _cache_argument()  # transformers 5 renamed `past_key_values` to `cache`


def returned_cache(output):
    cache = getattr(output, "cache", None)
    return cache if cache is not None else getattr(output, "past_key_values", None)


def plain_layers(cache) -> list[tuple] | None:
    """The (keys, values) of every layer, or None for a cache this module cannot cut and splice
    (sliding-window or quantized layers)."""
    from transformers.cache_utils import DynamicLayer

    layers = getattr(cache, "layers", None)
    if not layers or any(type(layer) is not DynamicLayer for layer in layers):
        return None
    return [(layer.keys, layer.values) for layer in layers]


def split_rows(sequences, attention_mask, layers: list[tuple]) -> list[Prefix]:
    """Each row's kept ids and keys/values, without the pads. The cache holds one position less
    than the sequence: the last generated token was never fed back."""
    import torch

    length = layers[0][0].shape[2]
    rows = []
    for row in range(sequences.shape[0]):
        real = torch.nonzero(attention_mask[row, :length], as_tuple=True)[0]
        rows.append(
            Prefix(
                sequences[row, real].tolist(),
                [(k[row].index_select(1, real), v[row].index_select(1, real)) for k, v in layers],
            )
        )
    return rows


class KVReuse:
    """The prefixes kept for the live conversations of one policy."""

    def __init__(self):
        self.kept: dict[int, Prefix] = {}
        self.shared: Prefix | None = None

    def prefixes(self, keys: list[int], prompts: list[list[int]]) -> list[Prefix | None]:
        """The reusable prefix of each prompt: at least one token is always left to read."""
        self.kept = {key: self.kept[key] for key in keys if key in self.kept}  # finished episodes let go
        chosen = []
        for key, prompt in zip(keys, prompts):
            prefix = self.kept.get(key, self.shared)
            n = min(common_length(prefix.ids, prompt), len(prompt) - 1) if prefix else 0
            chosen.append(prefix.cut(n) if n else None)
        return chosen

    def keep(self, keys: list[int], rows: list[Prefix]) -> None:
        self.kept.update(zip(keys, rows))
