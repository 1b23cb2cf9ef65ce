"""A session of the app without a browser: Streamlit's websocket protocol spoken as its frontend
speaks it (a `BackMsg` with the client's state out, `ForwardMsg`s in, both protobufs from the
streamlit package), for `classroom`'s load test and its test. A rerun is timed from
the request to the script's end as the server reports it (`script_finished`), so what is measured
is the server, not a browser's rendering.

Widgets are found by their `key=` (the last part of Streamlit's widget id), the way the app's
tests find them; their values are sent again on every rerun, as the frontend does. Like a
browser, a session reads its socket all the time (a thread: a greenlet under Locust), so it
answers the server's pings while it is idle: the server closes a socket that leaves its pings
unanswered for a minute (its 30 s ping interval and 30 s timeout), which a visitor busy in another
session for that long would otherwise see as a broken pipe."""

from __future__ import annotations

import dataclasses
import queue
import threading
import time

import websocket  # websocket-client: plain blocking sockets, which gevent (Locust) patches
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState

from hierlstm.app.pages import PAGES
from hierlstm.i18n import LANGUAGES

# The end of a rerun: not a run that gave way to another (the warm-up page's own reruns, a widget
# changed mid-run), nor a fragment's run (the cold page's polling).
ENDED = (
    ForwardMsg.ScriptFinishedStatus.FINISHED_SUCCESSFULLY,
    ForwardMsg.ScriptFinishedStatus.FINISHED_WITH_COMPILE_ERROR,
)
RERUN_TIMEOUT_S = 300


@dataclasses.dataclass
class Rerun:
    """One rerun as the server answered it: seconds from the request to `script_finished`, the
    texts it drew (markdown, boxes, headings), its exceptions and error boxes, and whether the
    warm-up's placeholder was the page."""

    seconds: float
    texts: list[str]
    errors: list[str]
    warming_up: bool


class Session:
    """One visitor's websocket session on the server at `url` ("http://127.0.0.1:8501")."""

    def __init__(self, url: str, timeout_s: float = RERUN_TIMEOUT_S):
        self.url, self.timeout_s = url, timeout_s
        self.socket = websocket.create_connection(
            url.replace("http", "ws", 1) + "/_stcore/stream",
            subprotocols=["streamlit"],
            origin=url,  # the server refuses a cross-site origin
            timeout=timeout_s,
        )
        self.socket.settimeout(None)  # the reader waits for as long as the session lasts
        self._inbox: queue.Queue = queue.Queue()  # each message, or the error that ended reading
        threading.Thread(target=self._read, name="streamlit-session", daemon=True).start()
        self.query = ""  # the page's URL query, as the app last set it
        self.pages: dict[str, str] = {}  # page name -> page script hash, from the navigation
        self.page = ""
        self.ids: dict[str, tuple[str, object]] = {}  # widget key -> (element kind, its proto)
        self.values: dict[str, WidgetState] = {}  # widget key -> the value sent on every rerun

    def close(self) -> None:
        self.socket.close()

    def _read(self) -> None:
        """Every message into the inbox; websocket-client answers pings as it reads."""
        try:
            while True:
                self._inbox.put(self.socket.recv())
        except Exception as error:  # closed, by us or by the server
            self._inbox.put(error)

    def rerun(
        self, page: str | None = None, query: str | None = None, wait: bool = True, **triggers
    ) -> Rerun | None:
        """Asks for a rerun of `page` (default: the current one) with `query` as its URL query and
        every value set, pressing the buttons named in `triggers` (key=True); waits for its end
        unless `wait` is False. The app reads the query when a session starts: a link's settings
        are a new session's."""
        if page is not None:
            self.page = page
        if query is not None:
            self.query = query
        message = BackMsg()
        state = message.rerun_script
        state.query_string = self.query
        if self.page in self.pages:
            state.page_script_hash = self.pages[self.page]
        else:  # a new session knows a page by its URL path, as a link gives it
            state.page_name = "" if self.page == PAGES[0].name else self.page
        for key, value in self.values.items():
            state.widget_states.widgets.append(self._with_id(key, value))
        for key in triggers:
            state.widget_states.widgets.append(self._with_id(key, WidgetState(trigger_value=True)))
        start = time.perf_counter()
        self.socket.send_binary(message.SerializeToString())
        return self._until_finished(start) if wait else None

    def set_value(self, key: str, **value) -> None:
        """A widget's value from now on, e.g. `set_value("time_steps", double_value=6)`."""
        self.values[key] = WidgetState(**value)

    def choose(self, key: str, label: str) -> None:
        """A selectbox's option by its label as shown (Streamlit sends the label)."""
        self.set_value(key, string_value=label)

    def language(self, lang: str) -> Rerun:
        self.choose("lang", LANGUAGES[lang])
        return self.rerun()

    def _with_id(self, key: str, value: WidgetState) -> WidgetState:
        if key not in self.ids:
            raise KeyError(f"no widget with key {key!r} on page {self.page or PAGES[0].name!r}")
        state = WidgetState()
        state.CopyFrom(value)
        state.id = self.ids[key][1].id
        return state

    def _until_finished(self, start: float) -> Rerun:
        texts, errors, warming_up = [], [], False
        deadline = start + self.timeout_s
        while True:
            try:
                data = self._inbox.get(timeout=max(deadline - time.perf_counter(), 0.001))
            except queue.Empty:
                raise TimeoutError(f"no end of the rerun in {self.timeout_s:.0f} s") from None
            if isinstance(data, Exception):
                raise data
            forward = ForwardMsg()
            forward.ParseFromString(data)
            kind = forward.WhichOneof("type")
            if kind == "navigation":
                hashes = [page.page_script_hash for page in forward.navigation.app_pages]
                self.pages = dict(zip([entry.name for entry in PAGES], hashes, strict=True))
            elif kind == "page_info_changed":
                self.query = forward.page_info_changed.query_string
            elif kind == "delta" and forward.delta.WhichOneof("type") == "add_block":
                # st.container(key=...): the warm-up's placeholder is one (app.server.waiting)
                warming_up |= forward.delta.add_block.id.endswith("-warmup-placeholder")
            elif kind == "delta" and forward.delta.WhichOneof("type") == "new_element":
                element = forward.delta.new_element
                name = element.WhichOneof("type")
                inner = getattr(element, name)
                widget_id = getattr(inner, "id", "")
                if widget_id.startswith("$$ID-"):  # "$$ID-<hash>-<key>"
                    key = widget_id.split("-", 2)[2]
                    self.ids[key] = (name, inner)
                if name in ("markdown", "alert", "heading"):
                    texts.append(inner.body)
                if name == "alert" and inner.format == inner.Format.ERROR:
                    errors.append(inner.body)
                elif name == "exception":
                    errors.append(f"{inner.type}: {inner.message}")
            elif kind == "script_finished" and forward.script_finished in ENDED:
                return Rerun(time.perf_counter() - start, texts, errors, warming_up)
