"""hierlstm's Streamlit app: `streamlit run app.py` (or `make run`).

The frame around every page: the language switch, the navigation, the shared settings form in
the sidebar (its one button applies the settings and runs the page's work), the device banner.
The pages in app_pages/ are thin scripts over `hierlstm.ui` and `hierlstm.charts`.
"""

import logging

import streamlit as st

from hierlstm._native import import_tensorflow_quietly

import_tensorflow_quietly()

from hierlstm import ui  # noqa: E402

ui.start_devices()  # HIERLSTM_LOGICAL_CPUS, before anything starts TensorFlow's runtime

st.set_page_config(page_title="hierlstm", page_icon=":material/account_tree:", layout="wide")

# (script, title message, icon, what the sidebar's Run button does there)
PAGES = (
    (
        "app_pages/shape_trace.py",
        "page.shape_trace",
        ":material/schema:",
        ui.Action("run.trace", False),
    ),
    (
        "app_pages/benchmark.py",
        "page.benchmark",
        ":material/timer:",
        ui.Action("run.benchmark", True),
    ),
    (
        "app_pages/scaling.py",
        "page.scaling",
        ":material/trending_up:",
        ui.Action("run.sweep", True),
    ),
    (
        "app_pages/weight_sharing.py",
        "page.weight_sharing",
        ":material/share:",
        ui.Action("run.sharing", True),
    ),
    (
        "app_pages/results.py",
        "page.results",
        ":material/table_view:",
        ui.Action("run.apply", False),
    ),
    ("app_pages/lesson.py", "page.lesson", ":material/school:", ui.Action("run.lesson", True)),
)

ui.language_ui()
pages = [
    st.Page(script, title=ui.text(title), icon=icon, default=index == 0)
    for index, (script, title, icon, _) in enumerate(PAGES)
]
actions = {page.url_path: action for page, (*_, action) in zip(pages, PAGES, strict=True)}
page = st.navigation(pages, position="top")
controls = ui.controls_ui(actions[page.url_path])
ui.banner(controls)
try:
    page.run()
    ui.end_of_run()
except Exception as error:  # the last line of defence: one line for the user, the log for us
    logging.getLogger("hierlstm.app").exception("page %s failed", page.url_path)
    st.error(ui.text("page.failed", error=ui.first_line(error)), icon=":material/error:")
