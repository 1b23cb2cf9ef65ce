"""Results: every stored measurement, filtered by variant, device and settings; chosen runs
compared in one chart; export and import (CSV/JSON), e.g. runs made on a GPU server."""

import streamlit as st

from hierlstm import charts
from hierlstm.app import caches, diff_view, display, state
from hierlstm.records import CONFIG_COLUMNS
from hierlstm.refusals import Refused
from hierlstm.results import diff, repair
from hierlstm.results.schema import ResultsError
from hierlstm.results.store import ResultStore
from hierlstm.timing import failures

_ = state.text
# The newest runs of the selection that the pickers offer (completed ones) and the table shows:
# a class stores thousands, and every rerun of the page turned each into a labelled option
# (14 MB and 0.8 s a rerun at 3,000 rows, against 1.8 MB and 0.2 s at 300) and sent them all;
# SQLite picks them, and the filters or an export reach the older ones.
NEWEST = 500
SHOWN = (  # the table's columns
    "created_at variant backend device status median_s p10_s p90_s first_call_s kernel "
    "noisy batch_size time_steps precision xla lstm_kernel host tensorflow_version "
    "keras_version error id"
).split()
FILTERS = (  # (column, message key, widget key)
    ("variant", "results.filter.variant", "results_variant"),
    ("backend", "control.backends", "results_backend"),
    ("device", "results.filter.device", "results_device"),
    ("batch_size", "results.filter.batch_size", "results_batch_size"),
    ("time_steps", "results.filter.time_steps", "results_time_steps"),
    ("precision", "results.filter.precision", "results_precision"),
    ("task", "results.filter.task", "results_task"),
    ("status", "results.filter.status", "results_status"),
)


def draw(controls, _inputs) -> None:
    lang = controls.language

    if kept := st.session_state.pop("results_recovered", None):
        st.success(_("results.recover.done", kept=kept, path=caches.store_path()))
    store = caches.result_store()
    try:
        values = caches.stored_values(store, tuple(name for name, *_ in FILTERS)) if store else None
    except Refused as error:  # readable when opened, refused since
        values, refusal = None, error.refusal
    else:
        refusal = caches.store_refusal() if store is None else None
    if values is None:
        st.error(_("refusal.not_kept", why=refusal.sentence(lang)), icon=":material/database:")
        if refusal.damaged and st.button(
            _("results.recover.button"), key="results_recover", icon=":material/restore:"
        ):
            try:
                kept_as, _store = repair.recover(refusal.path, ResultStore)
            except Refused as error:
                display.error(error.refusal.sentence(lang))
            else:
                st.session_state["results_recovered"] = str(kept_as)
                st.rerun()
        st.stop()

    where = {}  # column -> the values chosen in its filter
    for column, (name, label, key) in zip(st.columns(len(FILTERS)), FILTERS, strict=True):
        options = sorted(values[name], key=str)
        chosen = column.multiselect(
            _(label), options, key=key, placeholder=_("results.filter.all"), persist_state="session"
        )
        if chosen:
            where[name] = chosen
    completed = where | {"status": [s for s in where.get("status", ["ok"]) if s == "ok"]}
    try:
        total, shown, completed_count = store.count(), store.count(where), store.count(completed)
        selected = store.rows(where=where, newest=NEWEST)
        ok = store.rows(where=completed, newest=NEWEST)
    except Refused as error:  # refused since the filters' values were read
        display.error(error.refusal.sentence(lang))
        st.stop()
    st.caption(_("results.count", shown=shown, total=total, path=str(store.path)))

    def label(row) -> str:
        return (
            f"{row['variant']} · {row['backend']}"
            f"{' · ' + _('task.training') if row['task'] == 'training' else ''} · "
            f"b{row['batch_size']} t{row['time_steps']} · "
            f"{row['precision']} · {row['device'].split(' ')[0]} · "
            f"{row['created_at'][:16].replace('T', ' ')}"
        )

    pickable = ok.to_dict("records")  # the rows are newest first
    labels = {row["id"]: label(row) for row in pickable}
    chosen_ids = st.multiselect(
        _("results.compare"),
        list(labels),
        default=list(labels)[:6],
        format_func=labels.get,
        key="results_compare",
        help=_("results.compare.help"),
    )
    if chosen_ids:
        compared = ok.set_index("id").loc[chosen_ids].reset_index()
        display.chart(
            charts.bars.runs_figure(compared, [labels[i] for i in chosen_ids], lang),
            compared[["id", *CONFIG_COLUMNS.values(), "device", "median_s", "p10_s", "p90_s"]],
            key="results-compare",
        )
    elif not total:
        st.info(_("results.empty"), icon=":material/inbox:")

    def compare_two(pickable: list[dict]) -> None:
        """Two stored runs (newest first) picked and compared: B against A (`results.diff`)."""
        st.subheader(_("results.diff.title"))
        st.caption(_("results.diff.intro"))
        if len(pickable) < 2:
            st.info(
                _("results.diff.need_two", count=len(pickable)), icon=":material/compare_arrows:"
            )
            return
        run_labels = {row["id"]: diff_view.run_label(row, lang) for row in pickable}
        first, second = diff_view.default_pair(pickable)
        left, right = st.columns(2)
        pick = {"format_func": run_labels.get, "options": list(run_labels)}
        id_a = left.selectbox(_("results.diff.a"), index=first, key="results_diff_a", **pick)
        id_b = right.selectbox(_("results.diff.b"), index=second, key="results_diff_b", **pick)
        by_id = {row["id"]: row for row in pickable}
        with st.container(key="results-diff"):
            try:
                compared = diff.compare_rows(by_id[id_a], by_id[id_b])
            except diff.DiffError as error:
                st.warning(error.sentence(lang), icon=":material/block:")
                return
            st.markdown(diff_view.summary(compared, lang))
            if compared.changed:
                changed = diff_view.changed_frame(compared, lang)
                display.table(changed, key="results-diff-changed", static=True)
            else:
                st.caption(_("results.diff.same"))
            st.caption(compared.rule(lang))

    if completed_count > NEWEST:
        st.caption(_("results.pickable", shown=NEWEST, total=completed_count))
    if total:
        compare_two(pickable)
    display.table(display.headed(selected[SHOWN]), key="results-table")
    if shown > NEWEST:
        st.caption(_("results.table_newest", shown=NEWEST, total=shown))

    st.subheader(_("results.export"))
    # made when clicked: every rerun of the page would otherwise serialise every row twice
    exports = {"csv": store.export_csv, "json": store.export_json}
    for where, (kind, data) in zip(st.columns(2), exports.items(), strict=True):
        name, key = f"hierlstm-results.{kind}", f"results-export-{kind}"
        display.download(_(f"results.export.{kind}"), data, name, key, where=where)

    st.subheader(_("results.import"))
    st.markdown(_("results.import.intro"))
    with st.form("results_import_form", border=False):
        upload = st.file_uploader(
            _("results.import.file"), type=["csv", "json"], key="results_import"
        )
        submitted = st.form_submit_button(
            _("results.import.button"), key="results_import_button", icon=":material/upload:"
        )
    if submitted and upload is not None:
        try:
            report = store.import_file(
                upload.getvalue(), format=upload.name.rsplit(".", 1)[-1].lower()
            )
        except ResultsError as error:
            display.error(failures.first_line(error))
        except Refused as error:  # the file refused the write: a full disk, say
            display.error(error.refusal.sentence(lang))
        else:  # rerun so the table and the chart above include the new rows
            st.session_state["results_imported"] = (report.added, report.skipped)
            st.rerun()
    elif submitted:
        st.warning(_("results.import.none"))
    if imported := st.session_state.pop("results_imported", None):
        st.success(
            _("results.imported", added=imported[0], skipped=imported[1]),
            icon=":material/check_circle:",
        )
