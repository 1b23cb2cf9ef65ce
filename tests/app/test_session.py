"""`hierlstm.app.session` as pure functions: a new session's settings from its URL, and what a
later run puts back or sends again."""

from __future__ import annotations

from hierlstm.app import session as sessions
from hierlstm.app import state


def test_a_new_session_takes_the_url_over_the_defaults_and_keeps_its_warnings():
    values, session = sessions.first_values({"time_steps": "7", "lang": "fr"}, devices_known=True)
    assert values == {**state.DEFAULTS, "time_steps": 7}
    assert session.saved_values == values
    ((name, value, reason),) = session.url_warnings  # the parameter, its text, why not
    assert (name, value) == ("lang", "fr") and reason.startswith("lang must be one of")
    assert session.devices_unchecked == {} and session.run_request is None


def test_a_link_s_device_waits_to_be_checked_until_the_devices_are_known():
    link = {"device": "gpu:7", "batch_size": "3"}
    values, session = sessions.first_values(link, devices_known=False)
    assert values["device"] == "gpu:7" and session.url_warnings == []  # taken as it is
    assert session.devices_unchecked == {"device": "gpu:7"}
    widgets = dict(values)
    assign, still = sessions.restored(widgets, session, devices_known=False)
    assert assign == {} and still.devices_unchecked == {"device": "gpu:7"}
    assign, after = sessions.restored(widgets, session, devices_known=True)
    assert assign == {"device": state.DEFAULTS["device"]}  # this server has no gpu:7
    assert after.devices_unchecked == {} and after.url_warnings[0][:2] == ("device", "gpu:7")


def test_a_setting_streamlit_dropped_is_put_back_from_the_last_run():
    _, session = sessions.first_values({}, devices_known=True)
    session.saved_values = {**session.saved_values, "time_steps": 37}
    widgets = {name: value for name, value in session.saved_values.items() if name != "time_steps"}
    assign, after = sessions.restored(widgets, session, devices_known=True)
    assert assign == {"time_steps": 37}
    assert after.saved_values == session.saved_values


def test_after_a_timing_run_every_form_setting_is_sent_again_once():
    values, session = sessions.first_values({"batch_size": "5"}, devices_known=True)
    session.resend_settings = True
    assign, after = sessions.restored(values, session, devices_known=True)
    assert assign == {name: values[name] for name in state.FORM_FIELDS}  # lang is not the form's
    assert "lang" not in assign and after.resend_settings is False
    assert sessions.restored(values, after, devices_known=True)[0] == {}  # once
