"""The app's pages, in navigation order: one record per page, read by the frame
(streamlit_app.py) for its navigation, title and Run button, and by the tests that draw every
page. A page's script is `app_pages/<name>.py`, its navigation title the catalogue's
`page.<name>`, its title and explanation `<heading>.title` and `<heading>.intro`."""

from __future__ import annotations

import dataclasses

from hierlstm.app.sidebar import Action


@dataclasses.dataclass(frozen=True)
class Page:
    name: str
    icon: str
    action: Action  # what the sidebar's Run button does there
    heading: str

    @property
    def script(self) -> str:
        return f"app_pages/{self.name}.py"

    @property
    def title(self) -> str:  # the navigation's message key
        return f"page.{self.name}"


PAGES = (
    Page("shape_trace", ":material/schema:", Action("run.trace", heavy=False), "trace"),
    Page("benchmark", ":material/timer:", Action("run.benchmark", heavy=True), "bench"),
    Page("profile", ":material/query_stats:", Action("run.profile", heavy=True), "profile"),
    Page("scaling", ":material/trending_up:", Action("run.sweep", heavy=True), "scaling"),
    Page("weight_sharing", ":material/share:", Action("run.sharing", heavy=True), "sharing"),
    Page("results", ":material/table_view:", Action("run.apply", heavy=False), "results"),
    Page("your_model", ":material/upload_file:", Action("run.audit", heavy=True), "yours"),
    Page("inside", ":material/grid_on:", Action("run.learn", heavy=True), "inside"),
    Page("lesson", ":material/school:", Action("run.lesson", heavy=True), "lesson"),
)
