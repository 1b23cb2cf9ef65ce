"""The app's texts as a reader meets them: one Chinese term per concept (hierlstm/glossary.toml),
one word for the input's axis from the flag to the stored column, the paragraphs a page shows at
once kept short with their detail in an expander (`KEY.more`), and sizes named from the config,
never written in. No TensorFlow."""

import re
import tomllib
from pathlib import Path

import pytest

from hierlstm.app import state
from hierlstm.app.pages import PAGES
from hierlstm.cli.flags import config_from_args
from hierlstm.cli.parser import build_parser
from hierlstm.config import RunConfig, named_sizes
from hierlstm.i18n import read_catalogue, t
from hierlstm.model.shapes import AXES
from hierlstm.registry import VARIANTS
from hierlstm.results.schema import COLUMNS

GLOSSARY = tomllib.loads((Path(__file__).parents[1] / "hierlstm" / "glossary.toml").read_text())
CATALOGUE = read_catalogue()
# A page's first screen: its intro, a variant's explanation (the Shape trace tab), the Lesson's
# paragraph on the backends.
FIRST_SCREEN = [f"{page.heading}.intro" for page in PAGES]
FIRST_SCREEN += [variant.explanation_key for variant in VARIANTS.values()]
FIRST_SCREEN += ["lesson.backends.body"]
SHORT = 300  # characters of English, the sizes filled in
TABLE_ROWS = "a bad row in the import; 3 rows stored; {added} rows imported; compare by the row"


@pytest.mark.parametrize("concept", GLOSSARY)
def test_each_concept_has_one_chinese_term(concept):
    term = GLOSSARY[concept]
    named = re.compile("|".join(term.get("en", ["(?!)"])), re.IGNORECASE)  # (?!): none
    missing = [key for key, entry in CATALOGUE.items() if named.search(entry["en"])]
    missing = [key for key in missing if term["zh"] not in CATALOGUE[key]["zh"]]
    other = [key for key, entry in CATALOGUE.items() if any(w in entry["zh"] for w in term["not"])]
    assert not missing, f"{concept}: the Chinese lacks {term['zh']} in {missing}"
    assert not other, f"{concept}: another term than {term['zh']} in {other}"


@pytest.mark.parametrize("concept", [name for name in GLOSSARY if "en_not" in GLOSSARY[name]])
def test_each_concept_has_one_english_word(concept):
    other = re.compile("|".join(GLOSSARY[concept]["en_not"]), re.IGNORECASE)
    found = {
        key: match[0] for key, entry in CATALOGUE.items() if (match := other.search(entry["en"]))
    }
    assert not found, f"{concept}: another English word in {found}"


@pytest.mark.parametrize(
    "english",
    [
        "(batch, {height} rows, time, 1)",
        "a 12-row sub-sequence",
        "the 12 pooled rows",
        "time x rows + time",
        "stored rows-first",
    ],
)
def test_the_heights_other_words_are_refused(english):
    other = re.compile("|".join(GLOSSARY["height"]["en_not"]), re.IGNORECASE)
    assert other.search(english)
    assert not other.search(TABLE_ROWS)


@pytest.mark.parametrize("key", FIRST_SCREEN)
def test_a_first_screen_paragraph_is_short_and_names_the_configs_sizes(key):
    config = RunConfig(height=40, filters=8, inner_units=32, outer_units=24)  # not the question's
    sizes = named_sizes(config)
    for lang in ("en", "zh"):
        for part in (key, f"{key}.more"):
            if part in CATALOGUE:
                text = CATALOGUE[part][lang].format(**sizes)
                assert not re.search(r"\b(12|16|36|48|60)\b", text), (part, lang, text)
    assert len(CATALOGUE[key]["en"].format(**sizes)) <= SHORT, key


def test_a_size_in_a_text_follows_the_config():
    config = RunConfig(height=40, inner_units=32, outer_units=24)
    text = CATALOGUE["trace.intro"]["en"].format(**named_sizes(config))
    assert "(batch, height 40, time, 1)" in text and "LSTM(32)" in text and "LSTM(24)" in text
    assert f"the pooled height of {config.pooled_height}" in text


def test_the_inputs_axis_is_height_from_the_flag_to_the_stored_column():
    """The trace's axis, the CLI flag, the link's parameter, the stored column and the labels
    all say height (高度); its size after pooling is the pooled height."""
    assert [AXES[name][1] for name in ("input", "conv", "pool", "fold")] == ["height"] * 4
    assert AXES["permute"][2] == "height"
    args = build_parser().parse_args(["trace", "--variant", "folded", "--height", "40"])
    config = config_from_args(args)
    assert (config.height, config.pooled_height) == (40, 13)
    assert state.read_query({"height": "40"}) == ({"height": 40}, [])
    assert state.query_for({"height": 40}) == {"height": "40"}
    assert "height" in COLUMNS and "rows" not in COLUMNS
    assert [t(key) for key in ("axis.height", "column.height", "control.height")] == [
        "height",
        "height",
        "Height",
    ]
    assert {t(key, "zh") for key in ("axis.height", "column.height", "control.height")} == {"高度"}
