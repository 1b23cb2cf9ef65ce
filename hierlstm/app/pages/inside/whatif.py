"""The Inside page's what-if panel: interventions written as the command line writes them (one
parser, `hierlstm.inside.whatif`), examples to try, the views shown untouched, under the
interventions or as the change between them, one line of what changed in numbers, the trained
model's prediction beside the sound playing, and the map of the hidden states. Runs are cached
per input, parameters and interventions, so the untouched run is an entry of its own and never
one computed under an intervention. Figures: `charts.whatif`."""

from __future__ import annotations

import dataclasses
import functools

import numpy as np
import streamlit as st

from hierlstm import charts
from hierlstm.app import caches, display
from hierlstm.app.caches import COMPUTING
from hierlstm.app.state import labeller, language, text
from hierlstm.config import RunConfig
from hierlstm.i18n import t
from hierlstm.inside.hidden_map import SEQUENCES, hidden_maps
from hierlstm.inside.sounds import SOUNDS
from hierlstm.inside.whatif import (
    WhatIfRefused,
    command_words,
    playing,
    predict,
)
from hierlstm.inside.whatif_syntax import interventions_from_text
from hierlstm.inside.whatif_tf import WhatIf, intervened_values, what_if

LINE, PRESET, VIEW = "inside_whatif", "inside_whatif_preset", "inside_whatif_view"
VIEWS = ("change", "after", "before")


def presets(config: RunConfig) -> dict[str, str]:
    """Examples to try, as lines of the command's flags, placed on `config`'s geometry."""
    middle = config.time_steps // 2
    return {
        "none": "",
        "forget": "--clamp outer.f=0",
        "closed": "--clamp outer.o=0",
        "erase": f"--set outer.c=0 --at t={middle}:{middle + 1}",
        "inner_forget": "--clamp inner.f=0",
        "channel": f"--silence channel=0 --at t={middle}:",
        "low": f"--silence height=0:{config.height // 2} --at t={middle}:",
        "switch": f"--switch noise --at t={middle}:",
    }


def _preset_label(lang: str, middle: int, name: str) -> str:
    """An example's name in the language of the run that draws it (AppTest calls a format_func
    outside any run: `state.labeller`)."""
    return t(f"inside.whatif.preset.{name}", lang, t=middle)


def _apply_preset(lines: dict[str, str]) -> None:
    st.session_state[LINE] = lines[st.session_state[PRESET]]


@st.cache_data(max_entries=32, show_spinner=False)
def whatif_values_of(
    config: RunConfig, picture: np.ndarray, params_key: str, _params, interventions, seed: int
) -> dict:
    """Every view of the model on `picture` under `interventions` (() is the untouched run),
    cached per input, config, `params_key` (which names `_params`) and interventions."""
    with COMPUTING:
        return intervened_values(config, _params, picture[None, :, :, None], interventions, seed)


@dataclasses.dataclass(frozen=True)
class Panel:
    """What the panel chose: its interventions, the view, and the run (None without any)."""

    interventions: tuple = ()
    view: str = "before"
    run: WhatIf | None = None

    def views(self, untouched: dict, picture: np.ndarray) -> tuple[dict, np.ndarray]:
        """(every layer's values, the input (height, time)) to draw: `untouched` and `picture`
        without interventions, else the run's values untouched, under them, or the change."""
        if self.run is None:
            return untouched, picture
        before = {name: value[0] for name, value in self.run.before.items()}
        after = {name: value[0] for name, value in self.run.after.items()}
        chosen = {"before": before, "after": after}.get(self.view)
        if chosen is None:
            chosen = {name: after[name] - before[name] for name in after}
        return chosen, chosen["input"][:, :, 0]

    def redraw(self, lang: str):
        """A figure -> the figure drawn as a change, when the change is the view; else None."""
        if self.run is None or self.view != "change":
            return None
        return functools.partial(charts.whatif.as_change, lang=lang)


def panel_ui(config, picture, params_key, params, seed: int, source: str) -> Panel:
    """The panel: examples, the line, the view; the run, its line and its check."""
    st.subheader(text("inside.whatif.title"))
    st.markdown(text("inside.whatif.intro"))
    lines = presets(config)
    left, right = st.columns([2, 3])
    left.selectbox(
        text("inside.whatif.preset"),
        list(lines),
        format_func=functools.partial(_preset_label, language(), config.time_steps // 2),
        key=PRESET,
        on_change=_apply_preset,
        args=(lines,),
    )
    line = right.text_input(
        text("inside.whatif.line"),
        key=LINE,
        placeholder=lines["forget"],
        help=text("inside.whatif.line.help"),
    )
    try:
        interventions = interventions_from_text(line, config)
    except WhatIfRefused as refused:
        display.error(refused.sentence(language()))
        return Panel()
    if not interventions:
        st.caption(text("inside.whatif.none"))
        return Panel()
    with st.spinner(text("inside.whatif.computing")):
        run = what_if(
            config,
            params,
            picture[None, :, :, None],
            interventions,
            seed,
            values=lambda chosen: whatif_values_of(
                config, picture, params_key, params, chosen, seed
            ),
        )
    view = (
        st.segmented_control(
            text("inside.whatif.view"),
            VIEWS,
            format_func=labeller("inside.whatif.view."),
            default="change",
            key=VIEW,
        )
        or "change"
    )
    st.markdown(f"**{run.change.line(language())}**")
    first = min((step for step in run.change.first_time.values() if step is not None), default=None)
    checked = "inside.whatif.checked" if first is not None else "inside.whatif.checked_none"
    st.caption(text(checked, difference=run.oracle_difference, first=first))
    if source in SOUNDS:
        command = f"hierlstm whatif --sound {source}{_sizes(config)} {command_words(interventions)}"
        st.caption(text("inside.whatif.command", command=command))
    return Panel(interventions, view, run)


def _sizes(config: RunConfig) -> str:
    """The size flags of `config`: its time steps, and the others where they are not the
    model's defaults."""
    names = ("height", "filters", "kernel_size", "pool_height", "inner_units", "outer_units")
    differ = [name for name in names if getattr(config, name) != getattr(RunConfig(), name)]
    return "".join(
        f" --{name.replace('_', '-')} {getattr(config, name)}" for name in ("time_steps", *differ)
    )


def prediction_ui(config, curve, trained: bool, source: str, panel: Panel, values, time_step):
    """The trained head's prediction at every time step, untouched and under the
    interventions, beside the sound playing (a WAV's is not known); waiting for training."""
    st.subheader(text("inside.whatif.section.predict"))
    if curve is None or not trained:
        st.info(text("inside.whatif.predict.waiting"), icon=":material/model_training:")
        return
    untouched = values["outer_h"] if panel.run is None else panel.run.before["outer_h"][0]
    before = predict(curve.head, untouched)
    after = None if panel.run is None else predict(curve.head, panel.run.after["outer_h"][0])
    labels = None
    if source in SOUNDS:
        sound = np.full(config.time_steps, SOUNDS.index(source))
        labels = playing(panel.interventions, sound, config.time_steps)
    lang = language()
    figure = charts.whatif.prediction_figure(labels, before, after, lang, time_step)
    captions = []
    if labels is not None:
        right = [
            np.mean(p.argmax(axis=-1) == labels)
            for p in (before, before if after is None else after)
        ]
        captions.append(text("inside.whatif.predict.caption", before=right[0], after=right[1]))
    display.chart(figure, None, "inside-predict", *captions)


@st.cache_data(max_entries=64, show_spinner=False)  # ~10-15 KB each
def maps_of(config: RunConfig, seed: int, params_keys: tuple, _params_sets: dict, interventions):
    """The hidden states' maps (cached per config, parameter sets named by `params_keys`, and
    interventions)."""
    with COMPUTING:
        return hidden_maps(config, _params_sets, interventions, seed)


def map_ui(config, params_sets: dict, params_keys: tuple, seed: int, panel: Panel) -> None:
    """The map of the hidden states: before (and after) training, untouched and under the
    interventions."""
    st.subheader(text("inside.whatif.section.map"))
    st.markdown(text("inside.whatif.map.intro", sequences=SEQUENCES, time=config.time_steps))
    maps = maps_of(config, seed, params_keys, params_sets, panel.interventions)
    lang = language()
    figure = caches.figure(
        ("inside-map", config, seed, params_keys, panel.interventions, lang),
        lambda: charts.whatif.hidden_map_figure(maps, lang),
    )
    display.chart(figure, None, "inside-map")
