"""The Your model page beyond what every page shows: a refused file is one line and the page goes
on serving the next choice; an upload over the cap is refused before it is written. A timed run,
stored with the model's name and its file's hash: test_every_page.py, which runs it."""

import pytest
from apptests import TINY, clean, opened

from hierlstm.app.pages import yours
from hierlstm.i18n import t
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
