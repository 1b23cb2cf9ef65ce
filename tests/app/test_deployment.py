"""What a public demo relies on and nothing else checks: the served settings, and that no page
renders raw HTML."""

import tomllib
from pathlib import Path

from streamlit import config as streamlit_config

ROOT = Path(__file__).resolve().parents[2]


def test_streamlit_settings_fit_a_public_demo():
    settings = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    server = settings["server"]
    assert server["enableXsrfProtection"] is True and server["enableCORS"] is True
    assert server["fileWatcherType"] == "none" and server["runOnSave"] is False
    assert server["maxUploadSize"] <= 25  # MB: a 50 MB upload never reaches the app
    assert settings["client"]["showErrorDetails"] == "none"  # our one line, not a traceback
    assert settings["runner"]["fastReruns"] is False  # see the comment in config.toml
    # Both are Streamlit's options (a misspelt one is ignored): see their comments.
    assert settings["runner"]["postScriptGC"] is False
    known = streamlit_config._config_options_template
    assert {"runner.fastReruns", "runner.postScriptGC"} <= set(known)


def test_no_page_renders_raw_html():
    sources = [
        ROOT / "app.py",
        ROOT / "streamlit_app.py",
        *(ROOT / "app_pages").glob("*.py"),
        *(ROOT / "hierlstm").rglob("*.py"),
    ]
    offenders = [
        path.name
        for path in sources
        if "unsafe_allow_html" in path.read_text() or "st.html(" in path.read_text()
    ]
    assert len(sources) > 20 and offenders == []
