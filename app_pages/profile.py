"""Profile: hierlstm.app.pages.profile (this shim keeps its URL, /profile)."""

from hierlstm.app.pages import draw_page

draw_page("profile")
