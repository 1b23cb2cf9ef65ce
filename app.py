"""hierlstm's Streamlit app: `streamlit run app.py` (or `make run`).

The frame around every page: the language switch, the navigation, the shared settings form in
the sidebar (its one button applies the settings and runs the page's work), the device banner.
The pages in app_pages/ are thin scripts over the modules of `hierlstm.app`.
"""

import logging

import streamlit as st

from hierlstm._native import import_tensorflow_quietly

import_tensorflow_quietly()

from hierlstm.app import banner, devices, runs, sidebar, state  # noqa: E402
from hierlstm.timing import failures  # noqa: E402

devices.start_devices()  # HIERLSTM_LOGICAL_CPUS, before anything starts TensorFlow's runtime

st.set_page_config(page_title="hierlstm", page_icon=":material/account_tree:", layout="wide")

# (script, title message, icon, what the sidebar's Run button does there)
PAGES = (
    (
        "app_pages/shape_trace.py",
        "page.shape_trace",
        ":material/schema:",
        sidebar.Action("run.trace", False),
    ),
    (
        "app_pages/benchmark.py",
        "page.benchmark",
        ":material/timer:",
        sidebar.Action("run.benchmark", True),
    ),
    (
        "app_pages/scaling.py",
        "page.scaling",
        ":material/trending_up:",
        sidebar.Action("run.sweep", True),
    ),
    (
        "app_pages/weight_sharing.py",
        "page.weight_sharing",
        ":material/share:",
        sidebar.Action("run.sharing", True),
    ),
    (
        "app_pages/results.py",
        "page.results",
        ":material/table_view:",
        sidebar.Action("run.apply", False),
    ),
    ("app_pages/lesson.py", "page.lesson", ":material/school:", sidebar.Action("run.lesson", True)),
)

sidebar.language_ui()
pages = [
    st.Page(script, title=state.text(title), icon=icon, default=index == 0)
    for index, (script, title, icon, _) in enumerate(PAGES)
]
actions = {page.url_path: action for page, (*_, action) in zip(pages, PAGES, strict=True)}
page = st.navigation(pages, position="top")
controls = sidebar.controls_ui(actions[page.url_path])
banner.banner(controls)
try:
    page.run()
    runs.end_of_run()
except Exception as error:  # the last line of defence: one line for the user, the log for us
    logging.getLogger("hierlstm.app").exception("page %s failed", page.url_path)
    st.error(state.text("page.failed", error=failures.first_line(error)), icon=":material/error:")
