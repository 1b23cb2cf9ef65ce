"""Inside the tensors: a readable input's values through every layer, the outer step t and inner
step s chosen with two scrubbers and marked in every view with their provenance, the variants'
differences from the oracle at a chosen precision, and the model learning live."""

import streamlit as st

from hierlstm.app import caches, display, inside, runs, sidebar, state, values_charts
from hierlstm.config import PRECISIONS
from hierlstm.registry import VARIANTS
from hierlstm.timing import failures
from hierlstm.values.learner import learn
from hierlstm.values.learning import Learning
from hierlstm.values.provenance import pooled_rows, receptive_field

controls = sidebar.current_controls()
_ = state.text
lang, seed = controls.language, controls.timing.seed
config = inside.page_config(controls.config)

picture = inside.input_ui(config, seed)
if picture is None:
    st.stop()
curve = inside.current_curve(config)
params_key, params = inside.params_ui(config, curve, seed)
time_step, row = inside.scrubbers_ui(config)
selected = (time_step, row)
values = inside.values_of(config, picture, params_key, params)

field = receptive_field(
    time_step,
    row,
    height=config.height,
    time_steps=config.time_steps,
    pool_height=config.pool_height,
    kernel_size=config.kernel_size,
)
display.chart(values_charts.input_figure(picture, lang, selected, field), None, "inside-input")
rows, times = field.any(axis=1).nonzero()[0], field.any(axis=0).nonzero()[0]
st.caption(_("inside.input.caption", height=config.height, time=config.time_steps))
st.markdown(
    _(
        "inside.provenance",
        t=time_step,
        s=row,
        row0=rows[0],
        row1=rows[-1],
        t0=times[0],
        t1=times[-1],
        cells=int(field.sum()),
        kernel=config.kernel_size,
        pool=config.pool_height,
    )
)

st.subheader(_("inside.section.layers"))
conv = pooled_rows(row, config.pool_height)
display.chart(
    values_charts.maps_figure(
        values["conv"],
        _("inside.fig.conv"),
        _("inside.axis.row"),
        lang,
        (time_step, time_step, conv.start, conv.stop - 1),
    ),
    None,
    "inside-conv",
)
display.chart(
    values_charts.maps_figure(
        values["pool"],
        _("inside.fig.pool", pool=config.pool_height),
        _("inside.axis.pooled"),
        lang,
        (time_step, time_step, row, row),
    ),
    None,
    "inside-pool",
)
display.chart(
    values_charts.sequence_figure(values["permute"][time_step], lang, selected),
    None,
    "inside-permute",
)
inner = {name: values[f"inner_{name}"][time_step] for name in values_charts.GATE_SCALES}
title = _("inside.fig.inner", t=time_step, steps=config.rows, s=row)
display.chart(
    values_charts.lstm_figure(inner, title, _("inside.axis.inner_step"), lang, row),
    None,
    "inside-inner",
)
display.chart(
    values_charts.summary_figure(values["summary"], lang, time_step), None, "inside-summary"
)
outer = {name: values[f"outer_{name}"] for name in values_charts.GATE_SCALES}
title = _("inside.fig.outer", t=time_step)
display.chart(
    values_charts.lstm_figure(outer, title, _("inside.axis.time"), lang, time_step),
    None,
    "inside-outer",
)

st.subheader(_("inside.section.agree"))
st.markdown(_("inside.agree.intro"))
precision = (
    st.segmented_control(
        _("inside.agree.precision"), PRECISIONS, default="float32", key="inside_precision"
    )
    or "float32"
)
differences = {}
with st.spinner(_("inside.computing")):
    for variant in VARIANTS:
        run_config = config.replace(variant=variant, precision=precision)
        if problem := caches.trace_problem(run_config):
            st.caption(problem)
            continue
        try:
            differences[variant] = inside.differences_of(run_config, picture, seed)
        except failures.RUN_FAILURES as error:
            st.caption(_("inside.agree.failed", variant=variant, error=failures.first_line(error)))
outputs = ("conv", "pool", "summary", "output")
display.chart(
    values_charts.agreement_figure(differences, outputs, lang, precision), None, "inside-agree"
)
largest = ", ".join(f"{name} {d['output'].max():.1e}" for name, d in differences.items())
st.caption(_("inside.agree.largest", values=largest))

st.subheader(_("inside.section.learn"))
steps_column, _rest = st.columns([1, 3])
learning = Learning(
    steps=int(
        steps_column.number_input(_("inside.learn.steps"), 1, 2000, 100, 10, key="inside_steps")
    ),
    seed=seed,
)
learn_config = inside.learning_config(controls.config)
st.markdown(
    _(
        "inside.learn.intro",
        train=learning.train_sequences,
        held=learning.held_out,
        time=config.time_steps,
    )
)
live = st.empty()

if controls.run:
    st.button(_("inside.learn.stop"), key="inside-stop", on_click=inside.stop, type="primary")

    def work(progress):
        def on_progress(curve):
            st.session_state[inside.CURVE] = curve
            point = curve.points[-1]
            figure = values_charts.learning_figure(curve.points, curve.chance, lang, learning.steps)
            live.plotly_chart(figure, theme="streamlit", width="stretch")
            progress(
                point.step / learning.steps,
                _(
                    "inside.learn.progress",
                    step=point.step,
                    steps=learning.steps,
                    accuracy=point.held_out_accuracy,
                ),
            )

        return learn(learn_config, learning, on_progress)

    runs.start_run(inside.KEY, work, [learn_config])
runs.show_run_outcome(inside.KEY)
curve = inside.current_curve(config)
if curve is None:
    chance = inside.chance_of(learn_config, learning)
    with live.container():
        figure = values_charts.learning_figure([], chance, lang, learning.steps)
        display.chart(figure, None, "inside-learning")
    st.info(_("inside.learn.press_run"), icon=":material/play_arrow:")
else:
    last = curve.points[-1]
    with live.container():
        figure = values_charts.learning_figure(
            curve.points, curve.chance, lang, curve.learning.steps
        )
        display.chart(figure, None, "inside-learning")
    if curve.stopped:
        st.warning(_("inside.learn.stopped", step=last.step, steps=curve.learning.steps))
    st.markdown(
        _("inside.learn.done", accuracy=last.held_out_accuracy, step=last.step, chance=curve.chance)
    )
