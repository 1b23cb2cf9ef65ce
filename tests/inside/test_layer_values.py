"""Every layer's values the page shows (the Keras model's, `layer_values`) equal the numpy
oracle's (`reference_layers`), layer by layer, on a readable input at tiny sizes."""

import numpy as np
import pytest
from factories import html_tables

from hierlstm.config import RunConfig
from hierlstm.inside.keras_values import LAYERS, layer_values
from hierlstm.inside.sounds import sound_input
from hierlstm.model.params import init_params
from hierlstm.model.reference import reference_forward, reference_layers

CONFIG = RunConfig(height=9, time_steps=5, filters=3, inner_units=4, outer_units=5, batch_size=1)


@pytest.fixture(scope="module")
def both():
    params = init_params(CONFIG, seed=2)
    x = sound_input("rising", CONFIG.height, CONFIG.time_steps)[None, :, :, None]
    keras_values = layer_values(CONFIG, params, x)
    return keras_values, reference_layers(params, x, pool_height=CONFIG.pool_height), params, x


@pytest.mark.parametrize("name", LAYERS)
def test_a_layers_values_equal_the_oracles(both, name):
    keras_values, oracle, _params, _x = both
    assert keras_values[name].shape == oracle[name].shape
    assert np.max(np.abs(keras_values[name] - oracle[name])) < 1e-5
    assert np.max(np.abs(oracle[name])) > 0.01  # not a layer of zeros compared with zeros


def test_the_stepped_cells_end_where_the_models_own_layers_end(both):
    keras_values, oracle, params, x = both
    assert np.max(np.abs(keras_values["inner_h"][:, :, -1] - keras_values["summary"])) < 1e-6
    assert np.max(np.abs(keras_values["outer_h"] - keras_values["model_outer_h"])) < 1e-6
    expected = reference_forward(params, x, pool_height=CONFIG.pool_height)
    assert np.array_equal(oracle["outer_h"], expected)


def test_a_notebook_shows_every_layer_s_values_as_a_table(both):
    keras_values, _oracle, _params, _x = both
    ((header, *rows),) = html_tables(keras_values._repr_html_())
    assert header == ["layer", "axes", "shape", "min", "mean", "max"]
    assert [row[0] for row in rows] == [*LAYERS, "model_outer_h"]
    conv = keras_values["conv"]
    assert rows[0][1:3] == ["batch · height · time · channels", str(conv.shape)]
    assert rows[0][3] == format(conv.min(), ".4g") and rows[0][5] == format(conv.max(), ".4g")
    assert rows[LAYERS.index("inner_f")][1] == "batch · time · height · units"
    ((chinese, *_rows),) = html_tables(keras_values.show("zh")._repr_html_())
    assert chinese[:3] == ["层", "轴", "形状"]
