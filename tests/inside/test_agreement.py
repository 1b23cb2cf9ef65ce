"""The variants agree with the oracle on values, at every layer output they have: about 1e-7 in
float32, visibly more in 16 bits, on a readable input at tiny sizes."""

import pytest

from hierlstm.config import RunConfig
from hierlstm.inside.agreement import variant_differences
from hierlstm.inside.sounds import sound_input
from hierlstm.model.check import TOLERANCES
from hierlstm.model.params import init_params
from hierlstm.model.reference import reference_layers
from hierlstm.registry import VARIANTS

CONFIG = RunConfig(height=9, time_steps=4, filters=3, inner_units=4, outer_units=5, batch_size=1)
PARAMS = init_params(CONFIG, seed=1)
X = sound_input("falling", CONFIG.height, CONFIG.time_steps)[None, :, :, None]
ORACLE = reference_layers(PARAMS, X, pool_height=CONFIG.pool_height)
OUTPUTS = {
    "nested": {"conv", "pool", "output"},
    "time_distributed": {"conv", "pool", "summary", "output"},
    "folded": {"conv", "pool", "summary", "output"},
    "vectorized_map": {"conv", "pool", "summary", "output"},
    "shared_cell": {"conv", "pool", "summary", "output"},
    "fused": {"output"},
}


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_every_variant_agrees_in_float32_at_each_layer_output(variant):
    differences = variant_differences(CONFIG.replace(variant=variant), PARAMS, X, ORACLE)
    assert set(differences) == OUTPUTS[variant]
    assert max(float(d.max()) for d in differences.values()) < 1e-6


def test_sixteen_bits_lose_precision_the_picture_can_show():
    config = CONFIG.replace(variant="folded", precision="mixed_bfloat16")
    differences = variant_differences(config, PARAMS, X, ORACLE)
    largest = {name: float(d.max()) for name, d in differences.items()}
    assert all(1e-4 < value < TOLERANCES["mixed_bfloat16"] for value in largest.values()), largest
