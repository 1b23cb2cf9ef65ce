"""The one message catalogue: every text in English and Simplified Chinese, formatted by `t(key,
lang, **values)`. No Streamlit.

The texts live in `catalogue/*.toml`, a key in the file named by its first word (see `frame.toml`,
`controls.toml` and `axis.toml` for the grouped ones), one table per key:

    ["run.left"]
    en = "{message} · about {seconds} s left"
    zh = "{message} · 约剩 {seconds} 秒"
    en_sha = "7e4ed32de0b9"

`en_sha` is the SHA-256 prefix of the English the Chinese translates, so a changed English shows as
stale (`python -m hierlstm.i18n stale`) until re-stamped (`... stamp KEY`). A long text has `file =
"lesson/q.body"` and lives in `lesson/q.body.{en,zh}.md`."""

from __future__ import annotations

import os
import sys

LANGUAGES = {"en": "English", "zh": "简体中文"}
DEFAULT_LANGUAGE = "en"
# A plain path, and nothing but os until a parse: pathlib and tomllib cost a fresh process 15 ms.
CATALOGUE = os.path.join(os.path.dirname(__file__), "catalogue")


def read_catalogue(folder: str | os.PathLike = CATALOGUE) -> dict[str, dict[str, str]]:
    """Every entry in `folder`: `{key: {"en", "zh", "en_sha", "source"}}`. ValueError naming the
    file and key for a key in two files or an entry without a language or its hash."""
    import tomllib
    from pathlib import Path

    folder, entries = Path(folder), {}
    for path in sorted(folder.glob("*.toml")):
        with path.open("rb") as file:
            tables = tomllib.load(file)
        for key, table in tables.items():
            if key in entries:
                raise ValueError(
                    f"catalogue key {key!r} is in both {entries[key]['source']} and {path.name}."
                )
            if "file" in table:
                stem = folder / table["file"]
                table = {**table, **{lang: _text_file(stem, lang) for lang in LANGUAGES}}
            missing = [name for name in (*LANGUAGES, "en_sha") if name not in table]
            if missing:
                raise ValueError(
                    f"catalogue key {key!r} in {path.name} lacks {', '.join(missing)}."
                )
            entries[key] = {name: table[name] for name in (*LANGUAGES, "en_sha")}
            entries[key]["source"] = path.name
    return entries


def _text_file(stem, lang: str) -> str:
    return stem.with_name(f"{stem.name}.{lang}.md").read_text(encoding="utf-8").removesuffix("\n")


def english_hash(english: str) -> str:
    """The `en_sha` of an English text: the first 12 hex digits of its SHA-256."""
    import hashlib

    return hashlib.sha256(english.encode("utf-8")).hexdigest()[:12]


def stale_keys(folder: str | os.PathLike = CATALOGUE) -> list[str]:
    """Keys whose English changed since their Chinese was stamped, in file order."""
    entries = read_catalogue(folder)
    return [key for key, entry in entries.items() if entry["en_sha"] != english_hash(entry["en"])]


def stamp(keys: list[str], folder: str | os.PathLike = CATALOGUE) -> None:
    """Mark the Chinese of `keys` as translating their current English: rewrite each table's
    `en_sha` line in place, leaving every other line of the file as it is."""
    entries = read_catalogue(folder)
    unknown = [key for key in keys if key not in entries]
    if unknown:
        raise ValueError(f"not in the catalogue: {', '.join(unknown)}.")
    for key in keys:
        path = os.path.join(folder, entries[key]["source"])
        with open(path, encoding="utf-8") as file:
            lines = file.readlines()
        start = lines.index(f'["{key}"]\n')
        end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("[")), None)
        line = next(i for i in range(start, end or len(lines)) if lines[i].startswith("en_sha ="))
        lines[line] = f'en_sha = "{english_hash(entries[key]["en"])}"\n'
        with open(path, "w", encoding="utf-8") as file:
            file.writelines(lines)


def load_messages(folder: str = CATALOGUE) -> dict[str, dict[str, str]]:
    """`{key: {"en", "zh"}}`, from a cache in `folder/__pycache__` while no catalogue file has
    changed since it was written: the parse is ~10 ms of the app's cold start, the cache under
    1 ms. Like a .pyc's, its key is each file's size and mtime; an unwritable cache is skipped."""
    import marshal

    signature = [
        (os.path.relpath(entry.path, folder), entry.stat().st_size, entry.stat().st_mtime_ns)
        for root, _dirs, _files in os.walk(folder)
        if "__pycache__" not in root
        for entry in sorted(os.scandir(root), key=lambda entry: entry.name)
        if entry.is_file()
    ]
    cache = os.path.join(folder, "__pycache__", f"catalogue.{sys.implementation.cache_tag}.marshal")
    try:
        with open(cache, "rb") as file:
            cached_signature, messages = marshal.load(file)
        if cached_signature == signature:
            return messages
    except (OSError, EOFError, ValueError, TypeError):
        pass
    entries = read_catalogue(folder)
    messages = {key: {lang: entry[lang] for lang in LANGUAGES} for key, entry in entries.items()}
    try:
        os.makedirs(os.path.dirname(cache), exist_ok=True)
        partial = f"{cache}.{os.getpid()}"
        with open(partial, "wb") as file:
            marshal.dump((signature, messages), file)
        os.replace(partial, cache)  # atomic: a concurrent reader sees the old cache or the new
    except OSError:
        pass
    return messages


MESSAGES: dict[str, dict[str, str]] = load_messages()


def has_text(key: str, lang: str) -> bool:
    return lang in MESSAGES.get(key, {})


def t(key: str, lang: str = DEFAULT_LANGUAGE, **values) -> str:
    """Message `key` in `lang` (English if that language lacks it), formatted with `values`; an
    unknown key comes back as itself, so a missing text shows instead of crashing a page."""
    entry = MESSAGES.get(key)
    if entry is None:
        return key
    template = entry.get(lang) or entry[DEFAULT_LANGUAGE]
    return template.format(**values) if values else template


class MessageError(Exception):
    """An error that is a catalogue message: `key` with `values`; str() is the English, as the
    command line says it, `sentence(lang)` either language's. Mixed in before the exception class
    it is (`class DiffError(MessageError, ValueError)`)."""

    def __init__(self, key: str, **values):
        self.key, self.values = key, values
        super().__init__(self.sentence("en"))

    def sentence(self, lang: str = DEFAULT_LANGUAGE) -> str:
        return t(self.key, lang, **self.values)


def main(argv: list[str]) -> int:
    """`stale`: list the stale keys (status 1 if any); `stamp KEY ...`: re-stamp keys whose
    Chinese now translates their English."""
    if argv == ["stale"]:
        stale = stale_keys(CATALOGUE)
        print("\n".join(stale) or "every translation is up to date")
        return 1 if stale else 0
    if argv[:1] == ["stamp"] and len(argv) > 1:
        stamp(argv[1:], CATALOGUE)
        return 0
    print("usage: python -m hierlstm.i18n stale | stamp KEY ...", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
