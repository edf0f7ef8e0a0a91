import pytest

from hindsight.config import ConfigError
from hindsight.protocol import ProtocolConfig


def test_protocol_config_reads_known_keys():
    config = ProtocolConfig.from_dict({"k": 5, "budget": 12, "fields": ["id", "title"]})
    assert (config.k, config.budget, config.fields) == (5, 12, ("id", "title"))


@pytest.mark.parametrize(
    "data, message",
    [
        ({"topk": 5}, "unknown key.*topk"),
        ({"k": "10"}, r"protocol.k: expected int"),
        ({"budget": True}, r"protocol.budget: expected int"),
        ({"k": 0}, "k must be at least 1"),
        ({"fields": ["title"]}, "must include 'id'"),
        ({"fields": ["id", "authors"]}, "must include 'id' and come from"),
    ],
)
def test_protocol_config_rejects_bad_values_naming_the_key(data, message):
    with pytest.raises(ConfigError, match=message):
        ProtocolConfig.from_dict(data)


def test_a_float_written_without_a_dot_is_read_as_a_float(tmp_path):
    from hindsight.recipe import load_recipe

    recipe = tmp_path / "r.yaml"
    recipe.write_text("train:\n  learning_rate: 5e-6\n")  # YAML 1.1 gives the string '5e-6'
    from hindsight.train.config import TrainConfig

    assert TrainConfig.from_recipe(load_recipe(recipe)).learning_rate == 5e-6
    with pytest.raises(ConfigError, match="learning_rate: expected float"):
        TrainConfig.from_recipe(load_recipe(recipe, ["train.learning_rate=fast"]))
