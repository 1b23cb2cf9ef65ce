"""Shape trace: hierlstm.app.pages.shape_trace (this shim keeps its URL, /shape_trace)."""

from hierlstm.app.pages import draw_page

draw_page("shape_trace")
