"""What the AppTest files share: the frame app.py serves, tiny run settings, a page opened from a
link, and the checks and lookups on what it draws."""

import base64
import json
from pathlib import Path

import numpy as np
from streamlit.testing.v1 import AppTest

APP = Path(__file__).resolve().parents[2] / "streamlit_app.py"  # the frame app.py serves
TINY = {"batch_size": "2", "time_steps": "4", "repeats": "2", "warmup": "1"}
FIRST_PAGE = "app_pages/shape_trace.py"


def opened(page: str = FIRST_PAGE, query: dict | None = None, timeout: float = 120) -> AppTest:
    """A new session on `page` (a script path), opened from a link carrying `query`."""
    at = AppTest.from_file(str(APP), default_timeout=timeout)
    at.query_params = dict(query or {})
    at.run()
    if page != FIRST_PAGE:
        at.switch_page(page).run()
    return at


def clean(at: AppTest) -> None:
    """No exception and no error element drawn."""
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def run(at: AppTest) -> AppTest:
    """Run pressed, and the rerun it makes."""
    return at.button(key="run").click().run()


def shown_table(at: AppTest, key: str):
    """The frame of the table or dataframe drawn under `key`."""
    block = at.get_by_key(key)
    return (block.dataframe or block.table)[0].value


def figure(at: AppTest, key: str) -> dict:
    """The plotly figure drawn under `key`, as the JSON the browser gets."""
    return json.loads(at.get_by_key(key).proto.spec)


def array(value) -> np.ndarray:
    """A figure's array: plotly writes a numpy array as a typed array (base64, its shape)."""
    if not isinstance(value, dict):
        return np.array(value, float)
    flat = np.frombuffer(base64.b64decode(value["bdata"]), dtype=value["dtype"])
    shape = [int(size) for size in str(value.get("shape", flat.size)).split(",")]
    return flat.reshape(shape).astype(float)


def drawn(at: AppTest, key: str) -> bool:
    try:
        at.get_by_key(key)
    except KeyError:
        return False
    return True


def runtimes_drawn(at: AppTest, lang: str) -> None:
    """Your model's run on the runtimes: a row for TensorFlow and each installed runtime, or,
    without the runtimes' extra, one warning line saying how to install it."""
    from hierlstm import backends
    from hierlstm.backends.exported import runtimes_missing
    from hierlstm.i18n import t
    from hierlstm.registry import RUNTIMES

    if (reason := runtimes_missing()) is not None:
        assert t("yours.runtimes.refused", lang, reason=reason) in [w.value for w in at.warning]
        return
    on_runtimes = at.get_by_key("yours-runtimes").table[0].value
    installed = [name for name in RUNTIMES if backends.missing(name) is None]
    assert list(on_runtimes.iloc[:, 0]) == ["tensorflow", *installed]
