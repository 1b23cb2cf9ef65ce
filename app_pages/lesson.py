"""Lesson: hierlstm.app.pages.lesson (this shim keeps its URL, /lesson)."""

from hierlstm.app.pages import draw_page

draw_page("lesson")
