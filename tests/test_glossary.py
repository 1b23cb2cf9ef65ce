"""The app's texts as a reader meets them: one Chinese term per concept (hierlstm/glossary.toml),
the paragraphs a page shows at once kept short with their detail in an expander (`KEY.more`),
and sizes named from the config, never written in. No TensorFlow."""

import re
import tomllib
from pathlib import Path

import pytest

from hierlstm.app.pages import PAGES
from hierlstm.config import RunConfig, named_sizes
from hierlstm.i18n import read_catalogue
from hierlstm.registry import VARIANTS

GLOSSARY = tomllib.loads((Path(__file__).parents[1] / "hierlstm" / "glossary.toml").read_text())
CATALOGUE = read_catalogue()
# A page's first screen: its intro, a variant's explanation (the Shape trace tab), the Lesson's
# paragraph on the backends.
FIRST_SCREEN = [f"{page.heading}.intro" for page in PAGES]
FIRST_SCREEN += [variant.explanation_key for variant in VARIANTS.values()]
FIRST_SCREEN += ["lesson.backends.body"]
SHORT = 300  # characters of English, the sizes filled in


@pytest.mark.parametrize("concept", GLOSSARY)
def test_each_concept_has_one_chinese_term(concept):
    term = GLOSSARY[concept]
    named = re.compile("|".join(term.get("en", ["(?!)"])), re.IGNORECASE)  # (?!): none
    missing = [key for key, entry in CATALOGUE.items() if named.search(entry["en"])]
    missing = [key for key in missing if term["zh"] not in CATALOGUE[key]["zh"]]
    other = [key for key, entry in CATALOGUE.items() if any(w in entry["zh"] for w in term["not"])]
    assert not missing, f"{concept}: the Chinese lacks {term['zh']} in {missing}"
    assert not other, f"{concept}: another term than {term['zh']} in {other}"


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
