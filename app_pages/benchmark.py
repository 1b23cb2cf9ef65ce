"""Benchmark: hierlstm.app.pages.benchmark (this shim keeps its URL, /benchmark)."""

from hierlstm.app.pages import draw_page

draw_page("benchmark")
