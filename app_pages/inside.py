"""Inside the tensors: a readable input's values through every layer, the outer step t and inner
step s chosen with two scrubbers and marked in every view with their provenance, the variants'
differences from the oracle at a chosen precision, and the model learning live."""

import streamlit as st

from hierlstm.app import inside, sidebar

controls = sidebar.current_controls()
lang, seed = controls.language, controls.timing.seed
config = inside.page_config(controls.config)

picture = inside.input_ui(config, seed)
if picture is None:
    st.stop()
params_key, params = inside.params_ui(config, inside.current_curve(config), seed)
selected = inside.scrubbers_ui(config)
values = inside.values_of(config, picture, params_key, params)  # cached: a scrubber only redraws

inside.input_figure_ui(config, picture, selected, lang)
inside.layers_ui(config, values, selected, lang)
inside.agreement_ui(config, picture, seed, lang)
inside.learning_ui(controls, config, lang, seed)
