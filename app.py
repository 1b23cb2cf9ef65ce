"""hierlstm's Streamlit app (a first page; the full app is being built on this entry point)."""

import streamlit as st

from hierlstm._native import import_tensorflow_quietly

import_tensorflow_quietly()

from hierlstm.config import RunConfig  # noqa: E402
from hierlstm.trace import trace_report  # noqa: E402
from hierlstm.variants import VARIANTS  # noqa: E402

st.set_page_config(page_title="hierlstm", layout="wide")
st.title("hierlstm: shapes through a hierarchical LSTM")
variant = st.selectbox("Variant", list(VARIANTS), index=list(VARIANTS).index("folded"),
                       key="variant")
batch = st.number_input("Batch size", 1, 256, 4, key="batch_size")
time = st.number_input("Time steps", 1, 400, 10, key="time_steps")
st.caption(VARIANTS[variant].explanation)


@st.cache_data(max_entries=32)
def cached_trace(config: RunConfig) -> dict:
    return trace_report(config)


report = cached_trace(RunConfig(variant=variant, batch_size=int(batch), time_steps=int(time)))
st.dataframe(
    [{k: str(v) for k, v in step.items() if k != "depth"} for step in report["layers"]],
    key="trace_table",
)
