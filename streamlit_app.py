"""The frame around every page of hierlstm's app (app.py serves it; `streamlit run app.py`).

The language switch, the navigation, the page's title and explanation, the shared settings form
in the sidebar (its one button applies the settings and runs the page's work) and the device
banner. None of it needs TensorFlow: while the server's warm-up (`hierlstm.app.server.warmup`)
is still importing it and tracing the default models, the frame is drawn at once with a
placeholder where the page goes, and the page runs when the warm-up is ready; warm, the frame
and its page are drawn inside the warm-up's gate (never while one of its later steps runs:
`hierlstm.app.server.gate`).
A page is a module of `hierlstm.app.pages` behind one interface; app_pages/ holds their shims.
"""

import contextlib
import functools
import logging
from pathlib import Path

import streamlit as st

from hierlstm.app import banner, pages, sidebar, state  # none imports TF
from hierlstm.app.server import cleanup, waiting, warmup

cleanup.install()  # no Keras clear_session() after each script run (`cleanup` says why)
warmup.start()  # app.py starts it with the server; this is for AppTest and a bare script
warmup.page_started()

# The icon is a file of ours: a Material icon as page_icon makes the browser fetch it from
# Google's font servers, which an offline demo cannot reach (and should not need to). A file
# is read with numpy and PIL (Streamlit's image_to_url imports both), which a cold frame must
# not wait for while the warm-up imports TensorFlow: until then, Streamlit's own icon.
ICON = Path(banner.__file__).with_name("icon.png")  # hierlstm/app/, in a checkout or installed


def first_figure(page: str, controls):
    """The Shape trace's axis flow of its first variant, its shapes predicted from the settings
    (`hierlstm.model.shapes`): a cold page's figure, before TensorFlow is imported. None on the
    other pages, and when no shape can be predicted."""
    from hierlstm import charts  # plotly: loaded once charts are drawable
    from hierlstm.model import shapes

    steps = shapes.predicted_steps(controls.variant_configs[0]) if page == "shape_trace" else ()
    return charts.axis_flow.axis_flow_figure(steps, controls.language) if steps else None


def draw(status: warmup.Status) -> None:
    """The frame and, once the warm-up is ready, its page."""
    st.set_page_config(
        page_title="hierlstm", page_icon=str(ICON) if status.ready else None, layout="wide"
    )
    sidebar.language_ui(devices_known=status.ready)
    navigation = [
        st.Page(
            entry.script,
            title=state.text(entry.title),
            icon=entry.icon,
            url_path=None if index == 0 else entry.url_path,
            default=index == 0,
        )
        for index, entry in enumerate(pages.PAGES)
    ]
    frames = {page.url_path: frame for page, frame in zip(navigation, pages.PAGES, strict=True)}
    page = st.navigation(navigation, position="top")
    frame = frames[page.url_path]
    controls = sidebar.controls_ui(frame.action, frame.settings, devices_known=status.ready)
    if status.ready:
        banner.banner(controls, status.failed)
    else:
        banner.starting_banner()
    st.title(state.text(f"{frame.heading}.title"))
    state.lead(f"{frame.heading}.intro", controls.config)
    if not status.ready:  # the whole page runs again when the warm-up is ready
        waiting.wait_in_page(functools.partial(first_figure, frame.name, controls))
        st.stop()
    from hierlstm.app import runs  # TensorFlow is there now (the warm-up imported it)

    with runs.page_run(frame.name):  # its Run request spent, its end logged
        try:
            page.run()
        except Exception as error:  # the last line of defence: one line for the user, the log
            logging.getLogger("hierlstm.app").exception("page %s failed", page.url_path)
            from hierlstm.timing import failures

            text = state.text("page.failed", error=failures.first_line(error))
            st.error(text, icon=":material/error:")


warm = warmup.server_warmup()
status = warm.status()  # one look per script run: the page and frame agree
# Warm, the frame and its page run inside the warm-up's gate: never while one of its steps runs
# (hierlstm.app.server.gate). Cold, only the frame and its placeholder are drawn, outside it.
with warm.gate.page() if status.ready else contextlib.nullcontext():
    draw(status)
