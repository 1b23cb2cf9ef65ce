"""Weight sharing: one LSTMCell in two RNN layers (the source answer's recipe) beside one LSTM
layer called on two inputs: same variables, independent states, gradients from both paths,
and what each form costs. Its warm-up computes the checks at the default sizes."""

import functools

import pandas as pd
import streamlit as st

from hierlstm import charts
from hierlstm.app import banner, caches, display, outcomes, runs, state
from hierlstm.config import RunConfig
from hierlstm.i18n import t
from hierlstm.model import sharing

_ = state.text
KEY = __name__.rsplit(".", 1)[-1]  # the page's name: its run's slot (`hierlstm.app.runs`)


def check(passed: bool) -> str:
    return "✓" if passed else "✗"


def variables(paths) -> str:
    """rnn_a/shared_cell/{kernel, recurrent_kernel, bias}: the one owner, then the names."""
    owner = paths[0].rsplit("/", 1)[0]
    return f"{owner}/{{{', '.join(path.rsplit('/', 1)[-1] for path in paths)}}}"


def sizes(config: RunConfig) -> tuple[int, int, int, int]:
    """(units, steps, features, sequences): as many sub-sequences as the folded model has, each
    the pooled height long."""
    return (
        config.inner_units,
        config.pooled_height,
        config.filters,
        config.batch_size * config.time_steps,
    )


def inputs(controls) -> None:
    """The checks and the gradients, then the cost section's heading, above the run."""
    config = controls.config
    units, steps, features, _sequences = sizes(config)
    if source := display.code_expander(_("sharing.source"), key="sharing-source"):
        with source:
            st.code(display.related_sources(sharing.build_pair)[0][1], language="python")

    with st.spinner(_("sharing.computing")):
        reports = caches.sharing_reports_of(config)
    st.subheader(
        _(
            "sharing.checks",
            sequences=config.batch_size,
            steps=steps,
            features=features,
            units=units,
        )
    )

    table = pd.DataFrame(
        {
            _("sharing.col.check"): [
                _("sharing.check.same"),
                _("sharing.check.params"),
                _("sharing.check.different"),
                _("sharing.check.equal"),
                _("sharing.check.leak"),
                _("sharing.check.gradients"),
            ],
            **{
                _("sharing.form." + form): [
                    f"{check(report.same_objects)} {variables(report.variables_a)}",
                    f"{check(report.param_count * 2 == report.unshared_param_count)} "
                    + _(
                        "sharing.value.params",
                        count=report.param_count,
                        unshared=report.unshared_param_count,
                    ),
                    f"{check(report.different_inputs_diff > 0)} {report.different_inputs_diff:.3g}",
                    f"{check(report.equal_inputs_diff == 0)} {report.equal_inputs_diff:.3g}",
                    f"{check(report.state_leak_diff == 0)} {report.state_leak_diff:.3g}",
                    f"{check(report.gradient_sum_relative_error < 1e-5)} "
                    + _("sharing.value.gradients", error=report.gradient_sum_relative_error),
                ]
                for form, report in reports.items()
            },
        }
    )
    display.table(table, key="sharing-checks", static=True)
    st.caption(_("sharing.checks.caption"))

    lang = controls.language
    columns = st.columns(len(reports))
    for column, (form, report) in zip(columns, reports.items(), strict=True):
        with column:
            names = [path.rsplit("/", 1)[-1] for path in report.variables_a]
            data = pd.DataFrame(
                {
                    "variable": names,
                    "path_a": report.gradient_norms_a,
                    "path_b": report.gradient_norms_b,
                    "both": report.gradient_norms_total,
                }
            )
            figure = caches.figure(
                ("sharing-gradients", form, report, lang),
                functools.partial(_gradient_figure, form, names, report, lang),
            )
            display.chart(figure, data, key=f"sharing-gradients-{form}")

    st.subheader(_("sharing.cost"))
    st.markdown(_("sharing.cost.intro", cudnn=banner.cudnn_status()))


def _gradient_figure(form: str, names: list[str], report, lang: str):
    figure = charts.bars.gradient_figure(
        names, report.gradient_norms_a, report.gradient_norms_b, report.gradient_norms_total, lang
    )
    title = t("sharing.gradients.title", lang, form=t("sharing.form." + form, lang))
    return figure.update_layout(title={"text": title})


def plan(controls, _inputs) -> runs.Plan:
    return runs.Plan((controls.config,), functools.partial(time_forms, controls))


def time_forms(controls, progress) -> outcomes.Outcome:
    from hierlstm.hardware import resolve_device
    from hierlstm.model import cudnn

    config = controls.config
    units, steps, features, sequences = sizes(config)
    timings = sharing.time_forms(
        units,
        steps,
        features,
        sequences,
        device=resolve_device(config.device),
        use_cudnn=cudnn.use_cudnn_argument(config),  # as the variants decide it
        timing=controls.timing,
        on_progress=progress,
    )
    return outcomes.Outcome(outcomes.settings_of(controls), records=tuple(timings))


def draw(controls, _inputs) -> None:
    sequences, lang = sizes(controls.config)[3], controls.language
    press_run = _("sharing.press_run", sequences=sequences)
    outcome = runs.shown_result(KEY, press_run, outcomes.settings_of(controls))
    if outcome is not None:
        frame = pd.DataFrame(
            [
                {
                    "form": _("sharing.form." + timing.form),
                    "variant": "shared_cell" if timing.form == "shared_cell" else "folded",
                    "first_call_s": timing.first_call_s,
                    "median_s": timing.median_s,
                    "p10_s": timing.p10_s,
                    "p90_s": timing.p90_s,
                    "repeats": timing.repeats,
                    "kernel": timing.kernel,
                }
                for timing in outcome.records
            ]
        )
        title = _("sharing.cost.chart", sequences=sequences)
        _chart, right = display.chart_row(
            (charts.bars.timing_figure(frame, "form", title, lang), frame, "sharing-timing"), None
        )
        with right:
            display.table(frame.drop(columns=["variant"]), key="sharing-timing-table")
            st.caption(_("sharing.cost.caption"))


def warm_up() -> None:
    """The checks at the default sizes, into the cache the page reads."""
    caches.sharing_reports_of(RunConfig())
