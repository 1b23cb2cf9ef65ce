"""The catalogue as data: every translation stamped with the English it translates, every key in
one file and in both languages with the same fields, and the cache the app starts from agreeing
with the files. No TensorFlow."""

import shutil
import string
from pathlib import Path

import pytest

from hierlstm import i18n
from hierlstm.i18n import LANGUAGES, MESSAGES, read_catalogue, stale_keys, stamp

CATALOGUE = Path(i18n.CATALOGUE)
# The topics that hold more than one first word of a key (the module's docstring says so).
SHARED_FILES = {
    "frame": {"page", "sidebar", "run", "lock", "url", "download"},
    "controls": {"control", "task", "strategy", "precision"},
    "axis": {"axis", "axis_name", "axis_title"},
}


@pytest.fixture
def copy(tmp_path):
    """A writable copy of the catalogue, without its cache."""
    folder = tmp_path / "catalogue"
    shutil.copytree(CATALOGUE, folder, ignore=shutil.ignore_patterns("__pycache__"))
    return folder


def replace_in(path, old, new):
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, (path, old)
    path.write_text(text.replace(old, new), encoding="utf-8")


def test_every_translation_is_of_the_current_english():
    stale = stale_keys()
    assert not stale, (
        f"English changed since its Chinese: {' '.join(stale)}; update the Chinese, then "
        f"python -m hierlstm.i18n stamp {' '.join(stale)}"
    )


def test_a_changed_english_makes_its_key_stale_by_name(copy):
    replace_in(copy / "frame.toml", 'en = "Cancel"', 'en = "Cancel the run"')
    with open(copy / "lesson" / "q.body.en.md", "a", encoding="utf-8") as file:
        file.write("One more sentence.\n")
    assert stale_keys(copy) == ["run.confirm.no", "lesson.q.body"]


def test_stamp_rewrites_only_the_hash_line_of_its_key(copy):
    replace_in(copy / "frame.toml", 'en = "Cancel"', 'en = "Cancel the run"')
    before = (copy / "frame.toml").read_text(encoding="utf-8").splitlines()
    stamp(["run.confirm.no"], copy)
    after = (copy / "frame.toml").read_text(encoding="utf-8").splitlines()
    changed = [(old, new) for old, new in zip(before, after, strict=True) if old != new]
    sha = i18n.english_hash("Cancel the run")
    assert changed == [(f'en_sha = "{i18n.english_hash("Cancel")}"', f'en_sha = "{sha}"')]
    assert stale_keys(copy) == []


def test_the_command_lists_stale_keys_and_stamps_them(copy, monkeypatch, capsys):
    monkeypatch.setattr(i18n, "CATALOGUE", str(copy))
    assert i18n.main(["stale"]) == 0
    replace_in(copy / "lesson" / "td.bug.en.md", "**unknown**", "**unknown** (None)")
    assert i18n.main(["stale"]) == 1
    assert capsys.readouterr().out.splitlines()[-1] == "lesson.td.bug"
    assert i18n.main(["stamp", "lesson.td.bug"]) == 0
    assert i18n.main(["stale"]) == 0
    with pytest.raises(ValueError, match="not in the catalogue: no.such.key"):
        i18n.main(["stamp", "no.such.key"])
    assert i18n.main([]) == 2


def test_a_key_in_two_files_is_refused(copy):
    with open(copy / "chart.toml", "a", encoding="utf-8") as file:
        file.write('\n["run.left"]\nen = "left"\nzh = "剩"\nen_sha = "000000000000"\n')
    with pytest.raises(ValueError, match=r"'run.left' is in both chart.toml and frame.toml"):
        read_catalogue(copy)


def test_an_entry_without_its_chinese_is_refused(copy):
    replace_in(copy / "frame.toml", 'zh = "取消"\n', "")
    with pytest.raises(ValueError, match=r"'run.confirm.no' in frame.toml lacks zh"):
        read_catalogue(copy)


def test_every_key_in_both_languages_with_the_same_fields_and_formats():
    def fields(text):
        return sorted((name, spec) for _, name, spec, _ in string.Formatter().parse(text) if name)

    def complete(entry) -> bool:
        return sorted(entry) == sorted(LANGUAGES) and all(
            isinstance(text, str) and text.strip() for text in entry.values()
        )

    wrong = [
        key
        for key, entry in sorted(MESSAGES.items())
        if not complete(entry) or fields(entry["en"]) != fields(entry["zh"])
    ]
    assert wrong == [], "keys missing a language, or whose languages' fields differ"


def test_every_key_lives_in_the_file_of_its_first_word():
    misplaced = {
        key: entry["source"]
        for key, entry in read_catalogue().items()
        if key.split(".")[0] not in SHARED_FILES.get(entry["source"][: -len(".toml")], set())
        and entry["source"] != key.split(".")[0] + ".toml"
    }
    assert misplaced == {}


def test_every_text_file_belongs_to_an_entry():
    named = {entry["file"] for entry in _tables() if "file" in entry}
    files = {str(path.relative_to(CATALOGUE)).rsplit(".", 2)[0] for path in CATALOGUE.rglob("*.md")}
    assert files == named
    assert len(named) >= 10  # the Lesson's paragraphs


def _tables():
    import tomllib

    for path in sorted(CATALOGUE.glob("*.toml")):
        yield from tomllib.loads(path.read_text(encoding="utf-8")).values()


def test_the_import_reads_what_the_files_say():
    parsed = read_catalogue()
    assert MESSAGES == {
        key: {lang: entry[lang] for lang in LANGUAGES} for key, entry in parsed.items()
    }
    assert list(MESSAGES) == list(parsed)


def test_the_cache_follows_an_edit_and_is_skipped_where_it_cannot_be_written(copy):
    assert i18n.load_messages(str(copy)) == MESSAGES
    assert (copy / "__pycache__").is_dir()
    replace_in(copy / "frame.toml", 'zh = "取消"', 'zh = "取消运行"')
    assert i18n.load_messages(str(copy))["run.confirm.no"]["zh"] == "取消运行"
    shutil.rmtree(copy / "__pycache__")
    (copy / "__pycache__").write_text("not a folder")
    assert i18n.load_messages(str(copy))["run.confirm.no"]["zh"] == "取消运行"
