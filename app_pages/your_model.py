"""Your model: hierlstm.app.pages.your_model (this shim keeps its URL, /your_model)."""

from hierlstm.app.pages import draw_page

draw_page("your_model")
