"""Inside the tensors: hierlstm.app.pages.inside (this shim keeps its URL, /inside)."""

from hierlstm.app.pages import draw_page

draw_page("inside")
