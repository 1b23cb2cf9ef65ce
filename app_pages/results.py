"""Results: hierlstm.app.pages.results (this shim keeps its URL, /results)."""

from hierlstm.app.pages import draw_page

draw_page("results")
