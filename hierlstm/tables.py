"""The library's records as the app's tables, for a notebook and a terminal: a `Table` (a title,
a frame headed in the catalogue's words, notes below it) shown as HTML where a notebook asks for
`_repr_html_` and as aligned text everywhere else, and `Shown`, what a record mixes in to show
itself as its tables, in English by default or in the language its `show(lang)` names. The app's
pages draw the same frames (`named`, `headed`, `in_ms`), so a table has one home. No TensorFlow,
no Streamlit; pandas is imported when a table is made."""

from __future__ import annotations

import dataclasses
import html
import re
import unicodedata
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from hierlstm.i18n import DEFAULT_LANGUAGE, MESSAGES, t

if TYPE_CHECKING:
    import pandas as pd

_BOLD = re.compile(r"\*\*(.+?)\*\*")
_CODE = re.compile(r"`([^`]+)`")


def named(rows: Iterable[Mapping[str, Any]] | pd.DataFrame, prefix: str, lang: str):
    """A frame of `rows` (dicts, or a frame) whose headers are the catalogue's `prefix` + column
    in `lang`.

    Example:
        `named([{"layer": "conv"}], "yours.col.", "zh")` is a frame with one column, "层".
    """
    import pandas as pd

    return pd.DataFrame(rows).rename(columns=lambda name: t(prefix + name, lang))


def headed(frame: pd.DataFrame, lang: str) -> pd.DataFrame:
    """A copy of a result frame whose headers are its columns' names in the catalogue
    (`column.*`) in `lang`; a column the catalogue does not name keeps its own."""
    names = {
        name: t(f"column.{name}", lang) for name in frame.columns if f"column.{name}" in MESSAGES
    }
    return frame.rename(columns=names)


def in_ms(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy for a table: every `*_s` column (seconds) as `*_ms`, in milliseconds."""
    seconds = [name for name in frame.columns if name.endswith("_s")]
    shown = frame.copy()
    shown[seconds] = shown[seconds] * 1e3
    return shown.rename(columns={name: name.removesuffix("_s") + "_ms" for name in seconds})


def _number(value: float) -> str:
    return format(value, ".4g")


def _inline(text: str) -> str:
    """A catalogue sentence as HTML: escaped, its **bold** and `code` kept."""
    text = _BOLD.sub(r"<strong>\1</strong>", html.escape(text))
    return _CODE.sub(r"<code>\1</code>", text)


def _plain(text: str) -> str:
    return _CODE.sub(r"\1", _BOLD.sub(r"\1", text))


def _width(text: str) -> int:
    """Columns `text` takes on a terminal: a wide (Chinese) character two."""
    return sum(2 if unicodedata.east_asian_width(char) in "WF" else 1 for char in text)


@dataclasses.dataclass(frozen=True, eq=False)
class Table:
    """One of a record's tables: `title` above, `frame` (its headers already in the reader's
    language; no rows: only the title and the notes are shown), `notes` below, one sentence
    each."""

    title: str
    frame: pd.DataFrame
    notes: tuple[str, ...] = ()

    def _repr_html_(self) -> str:
        parts = [f"<p><strong>{html.escape(self.title)}</strong></p>"] if self.title else []
        if len(self.frame):
            parts.append(self.frame.to_html(index=False, border=0, na_rep="", float_format=_number))
        parts += [f"<p>{_inline(note)}</p>" for note in self.notes]
        return '<div class="hierlstm-table">' + "\n".join(parts) + "</div>"

    def __repr__(self) -> str:
        import pandas as pd

        lines = [self.title, "=" * _width(self.title)] if self.title else []
        if len(self.frame):
            with pd.option_context("display.unicode.east_asian_width", True):
                text = self.frame.to_string(index=False, na_rep="", float_format=_number)
            lines.append(text)
        lines += [_plain(note) for note in self.notes]
        return "\n".join(lines)


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class Tables:
    """A record's tables in one language, one after another (what `Shown.show` returns)."""

    tables: tuple[Table, ...]

    def __iter__(self):
        return iter(self.tables)

    def __len__(self) -> int:
        return len(self.tables)

    def __getitem__(self, index: int) -> Table:
        return self.tables[index]

    def _repr_html_(self) -> str:
        return "\n".join(table._repr_html_() for table in self.tables)

    def __repr__(self) -> str:
        return "\n\n".join(repr(table) for table in self.tables)


class Shown:
    """Mixed into a record that says what its tables are (`tables(lang)`): a notebook shows it
    as those tables in HTML, a terminal and `repr` as aligned text, in English; `show(lang)` in
    another language. A dataclass mixing it in is declared with `repr=False`, so that its
    readable repr is this one."""

    def tables(self, lang: str = DEFAULT_LANGUAGE) -> list[Table]:
        """The record's tables in `lang` ("en" or "zh")."""
        raise NotImplementedError

    def show(self, lang: str = DEFAULT_LANGUAGE) -> Tables:
        """The record's tables in `lang` ("en" or "zh"), to display or print.

        Example:
            `hierlstm.trace_shapes(config).show("zh")` as a notebook cell's last line shows the
            Shape trace's table in Chinese.
        """
        return Tables(tuple(self.tables(lang)))

    def _repr_html_(self) -> str:
        return self.show()._repr_html_()

    def __repr__(self) -> str:
        return repr(self.show())

    def _repr_pretty_(self, printer, cycle) -> None:
        """IPython's text form (it would print a list or a frame its own way otherwise)."""
        printer.text(repr(self))
