"""Scaling: hierlstm.app.pages.scaling (this shim keeps its URL, /scaling)."""

from hierlstm.app.pages import draw_page

draw_page("scaling")
