"""Your model: hierlstm.app.pages.yours (this shim keeps its URL, /your_model)."""

from hierlstm.app.pages import draw_page

draw_page("yours")
