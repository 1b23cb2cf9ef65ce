"""Weight sharing: hierlstm.app.pages.weight_sharing (this shim keeps its URL, /weight_sharing)."""

from hierlstm.app.pages import draw_page

draw_page("weight_sharing")
