"""Every HIERLSTM_* variable is read through `hierlstm.settings`' one table, and a bad value of
each is refused the same way: one catalogue sentence naming it, in English and Chinese; from the
command line one `error:` line and exit 2 before TensorFlow; in the app the same sentence, as the
error the page that reads it already shows (a limit's, an upload's, the banner's)."""

import re
from pathlib import Path

import pytest
from factories import run_cli

from hierlstm import settings
from hierlstm.settings import SETTINGS, SettingValueError

ROOT = Path(__file__).resolve().parents[1]
# A refused value of every setting that has one (a path is any text: its opener says what is
# wrong with the file), each checked to be refused below.
BAD = {name: "lots" for name, setting in SETTINGS.items() if setting.parse is not settings.path}
BAD["HIERLSTM_MAX_BATCH"] = "0"
BAD["HIERLSTM_LOGICAL_CPUS"] = "65"
BAD["HIERLSTM_CONFIRM_SECONDS"] = "1.5"


def test_the_table_is_every_hierlstm_variable_the_package_reads():
    sources = [*(ROOT / "hierlstm").rglob("*.py"), ROOT / "app.py", ROOT / "streamlit_app.py"]
    read = {name for path in sources for name in re.findall(r"HIERLSTM_[A-Z_]+", path.read_text())}
    assert read == set(SETTINGS)


def test_every_setting_but_a_path_has_a_refused_value():
    paths = {name for name, setting in SETTINGS.items() if setting.parse is settings.path}
    assert set(BAD) == set(SETTINGS) - paths
    assert paths == {"HIERLSTM_WARMUP_AFTER", "HIERLSTM_DB", "HIERLSTM_LOCK_DIR"} | {
        "HIERLSTM_NVIDIA_PROC"
    }


@pytest.mark.parametrize("name", sorted(BAD))
def test_a_bad_value_is_one_sentence_naming_the_setting_in_both_languages(name):
    with pytest.raises(SettingValueError) as refused:
        settings.read(name, {name: BAD[name]})
    english, chinese = refused.value.sentence("en"), refused.value.sentence("zh")
    assert str(refused.value) == english
    assert english.startswith(f"{name} must be ") and english.endswith(f"got {BAD[name]!r}.")
    assert chinese.startswith(f"{name} 必须是") and f"{BAD[name]!r}" in chinese
    assert settings.read(name, {name: "  "}) == SETTINGS[name].default  # blank: the default


def test_good_values_are_parsed_and_unset_is_the_default():
    assert settings.read("HIERLSTM_MAX_BATCH", {"HIERLSTM_MAX_BATCH": " 256 "}) == 256
    assert settings.read("HIERLSTM_LOGICAL_CPUS", {"HIERLSTM_LOGICAL_CPUS": "64"}) == 64
    assert settings.read("HIERLSTM_WARMUP", {"HIERLSTM_WARMUP": "trace"}) == "trace"
    assert settings.read("HIERLSTM_MAX_BATCH", {}) == 1024
    assert settings.read("HIERLSTM_GPU_MEMORY_MB", {}) is None


@pytest.mark.parametrize("name", sorted(BAD))
def test_the_command_line_refuses_it_with_one_error_line_and_exit_2(name, capsys, monkeypatch):
    """Even a command that reads none of them (`variants`): the check comes first, for all."""
    monkeypatch.setenv(name, BAD[name])
    status, out, err = run_cli(capsys, "variants")
    expected = str(pytest.raises(SettingValueError, settings.read, name, {name: BAD[name]}).value)
    assert (status, out, err) == (2, "", f"error: {expected}\n")


def _upload():
    from hierlstm.yours import archive

    return archive.upload_cap_mb()


def _limits():
    from hierlstm.admission import limits

    return limits.current_limits(sees_a_gpu=lambda: False)


def _gpu_budget():
    from hierlstm.admission import limits

    return limits._gpu_budget(lambda: True)


def _logical_cpus():
    from hierlstm.distributed import ensure_logical_cpus_from_environment

    return ensure_logical_cpus_from_environment()


def _kept_profiles():
    from hierlstm.profiling.record import kept_profiles

    return kept_profiles()


def _warmup():
    from hierlstm.app.server import warmup

    return warmup.steps_for(settings.read("HIERLSTM_WARMUP"))


def _runs():
    from hierlstm.backends import dispatch
    from hierlstm.config import RunConfig

    return dispatch.execute(lambda progress: None, None, [RunConfig()])


def _gpu_memory():
    from hierlstm.hardware import gpu

    return gpu.memory_limit_mb()


# Where the app (or a library caller) meets each setting, and the error class it shows there.
READERS = {
    "HIERLSTM_MAX_BATCH": (_limits, "LimitError"),
    "HIERLSTM_MAX_TIME_STEPS": (_limits, "LimitError"),
    "HIERLSTM_MEMORY_BUDGET_MB": (_limits, "LimitError"),
    "HIERLSTM_TRACE_BUDGET_STEPS": (_limits, "LimitError"),
    "HIERLSTM_CONFIRM_SECONDS": (_limits, "LimitError"),
    "HIERLSTM_GPU_MEMORY_MB": (_gpu_budget, "LimitError"),
    "HIERLSTM_LOGICAL_CPUS": (_logical_cpus, "SettingValueError"),
    "HIERLSTM_KEEP_PROFILES": (_kept_profiles, "SettingValueError"),
    "HIERLSTM_UPLOAD_MB": (_upload, "ModelFileError"),
    "HIERLSTM_WARMUP": (_warmup, "SettingValueError"),
    "HIERLSTM_RUNS": (_runs, "SettingValueError"),
}


def test_every_refusable_setting_has_a_reader_here():
    assert set(READERS) == set(BAD)


@pytest.mark.parametrize("name", sorted(READERS))
def test_where_it_is_read_it_is_the_same_catalogue_sentence(name, monkeypatch):
    reader, kind = READERS[name]
    monkeypatch.setenv(name, BAD[name])
    with pytest.raises(Exception) as raised:
        reader()
    refused = pytest.raises(SettingValueError, settings.read, name).value
    assert type(raised.value).__name__ == kind
    for lang in ("en", "zh"):
        assert raised.value.sentence(lang) == refused.sentence(lang)


def test_the_gpu_memory_limit_is_the_same_sentence_for_the_gpu_setup_and_the_budget(monkeypatch):
    monkeypatch.setenv("HIERLSTM_GPU_MEMORY_MB", "lots")
    with pytest.raises(SettingValueError) as setup:
        _gpu_memory()
    with pytest.raises(Exception) as budget:
        _gpu_budget()
    assert setup.value.sentence("zh") == budget.value.sentence("zh")
