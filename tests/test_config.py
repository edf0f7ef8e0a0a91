import pytest

from hindsight.config import ConfigError
from hindsight.protocol import ProtocolConfig


def test_protocol_config_reads_known_keys():
    config = ProtocolConfig.from_dict({"k": 5, "budget": 12, "fields": ["id", "title"]})
    assert (config.k, config.budget, config.fields) == (5, 12, ("id", "title"))


@pytest.mark.parametrize("data, message", [
    ({"topk": 5}, "unknown key.*topk"),
    ({"k": "10"}, r"protocol.k: expected int"),
    ({"budget": True}, r"protocol.budget: expected int"),
    ({"k": 0}, "k must be at least 1"),
    ({"fields": ["title"]}, "must include 'id'"),
    ({"fields": ["id", "authors"]}, "must include 'id' and come from"),
])
def test_protocol_config_rejects_bad_values_naming_the_key(data, message):
    with pytest.raises(ConfigError, match=message):
        ProtocolConfig.from_dict(data)
