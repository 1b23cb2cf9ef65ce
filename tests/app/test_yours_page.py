"""The Your model page beyond what every page shows: a refused file is one line and the page goes
on serving the next choice; an upload over the cap is refused before it is written; a model with
nothing to rewrite is still timed. A timed rewrite, stored with the model's name and its file's
hash: test_every_page.py, which runs it."""

import pytest
from apptests import TINY, clean, drawn, opened, run, runtimes_drawn

from hierlstm import backends
from hierlstm.app.pages import yours
from hierlstm.i18n import t
from hierlstm.registry import RUNTIMES
from hierlstm.results.store import ResultStore
from hierlstm.yours import archive, load

PAGE = "app_pages/yours.py"


def test_a_bad_file_is_one_line_and_the_page_goes_on(tmp_path, monkeypatch, database):
    cut = tmp_path / "cut.keras"
    cut.write_bytes(b"PK\x03\x04" + b"\0" * 64)
    good = yours.example_path
    monkeypatch.setattr(
        yours, "example_path", lambda name: cut if name == "recurrent_dropout" else good(name)
    )
    at = opened(PAGE, {**TINY, "lang": "zh"})
    at.selectbox(key="yours_example").set_value("recurrent_dropout").run()
    assert not at.exception
    assert [e.value for e in at.error] == [t("yours.bad.truncated", "zh", file="cut.keras")]
    at.selectbox(key="yours_example").set_value("masked_lstm").run()
    clean(at)
    assert at.get_by_key("yours-audit") is not None


def test_an_upload_over_the_cap_is_refused_before_it_is_written(monkeypatch):
    monkeypatch.setenv(archive.UPLOAD_ENV, "1")
    with pytest.raises(load.ModelFileError) as raised:
        yours.kept_upload("big.keras", b"\0" * (1024 * 1024 + 1))
    assert raised.value.key == "yours.bad.size" and "\n" not in raised.value.sentence("zh")
    kept = yours.kept_upload("../my model.h5", b"\x89HDF")
    assert kept.parent.parent == yours.uploads_folder() and kept.name == "my_model.h5"


def test_a_model_with_nothing_to_rewrite_is_still_timed_here_and_on_the_runtimes(database):
    """Run is offered for every model: without a rewrite, the original alone, on TensorFlow
    and exported to each installed runtime."""
    at = opened(PAGE, {**TINY, "lang": "zh"})
    at.selectbox(key="yours_example").set_value("masked_lstm").run()
    clean(at)
    assert t("yours.rewrite.none", "zh") in [caption.value for caption in at.caption]
    assert t("yours.press_run.original", "zh") in [info.value for info in at.info]
    run(at)
    clean(at)
    assert not drawn(at, "yours-timing")  # no rewrite to time beside it
    assert ResultStore(database).audits().empty  # a row is a rewrite's timing
    runtimes_drawn(at, "zh")  # or, without the extra, how to install it


def test_without_the_runtimes_extra_run_says_how_to_install_it_and_the_page_goes_on(
    monkeypatch, database
):
    """No runtime installed (the plain `make run`): the model is not exported, one warning line
    names what is missing and how to install it, and the page keeps serving."""
    sentence = "the runtimes are missing: run make run RUNTIMES=1."
    monkeypatch.setattr(backends, "missing", lambda name: sentence if name in RUNTIMES else None)
    at = opened(PAGE, {**TINY, "lang": "en"})
    at.selectbox(key="yours_example").set_value("masked_lstm").run()
    run(at)
    assert not at.exception and not at.error
    refused = t("yours.runtimes.refused", "en", reason=sentence)  # beside the model's pitfalls
    assert [w.value for w in at.warning].count(refused) == 1
    assert not drawn(at, "yours-runtimes")
