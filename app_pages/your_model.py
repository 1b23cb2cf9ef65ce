"""Your model: a .keras file of your own (or a built-in example), traced inside its wrappers, every
recurrent layer's kernel per backend and why, checked on the graph traced as a GPU traces it, and
the rewrite with its check; Run times the original and the rewrite side by side."""

import streamlit as st

from hierlstm.app import display, runs, sidebar, state
from hierlstm.app import your_model as yours
from hierlstm.yours import archive, examples, load

controls = sidebar.current_controls()
_ = state.text
KEY = "your_model"

source = st.radio(
    _("yours.source"),
    ["example", "upload"],
    format_func=state.labeller("yours.source."),
    horizontal=True,
    key="yours_source",
)
try:
    if source == "example":
        names = list(examples.EXAMPLES)
        name = st.selectbox(
            _("yours.example"),
            names,
            index=names.index(yours.DEFAULT_EXAMPLE),
            format_func=state.labeller("yours.example."),
            key="yours_example",
        )
        path = yours.example_path(name)
    else:
        limit = archive.upload_cap_mb()
        uploaded = st.file_uploader(
            _("yours.upload", limit=limit), type=["keras", "h5"], key="yours_upload"
        )
        if uploaded is None:
            st.stop()
        path = yours.kept_upload(uploaded.name, uploaded.getvalue())
    sha256 = load.file_hash(path)
    free = yours.free_dimensions(str(path), sha256)
    sizes = {}
    columns = st.columns(max(len(free), 1) + 1)
    for column, dimension in zip(columns, free, strict=False):
        default = yours.default_size(dimension)
        sizes[dimension] = column.number_input(
            dimension, 1, 512, default, key=f"yours_size_{dimension}"
        )
    jit = columns[-1].checkbox(_("yours.jit"), key="yours_jit", help=_("yours.jit.help"))
    with st.spinner(_("yours.examining")):
        seen = yours.examined(str(path), sha256, tuple(sorted(sizes.items())), jit)
except load.ModelFileError as error:  # a bad file: one line, the page goes on serving
    st.error(error.sentence(controls.language), icon=":material/block:")
    st.stop()

result = seen.audit
st.subheader(_("yours.trace", name=seen.name, sha=sha256))
wide = {_("yours.col.layer"): st.column_config.TextColumn(width="large")}
display.table(yours.trace_frame(result), key="yours-trace", column_config=wide)
if result.uncounted:
    st.caption(_("yours.uncounted", layers=", ".join(result.uncounted)))

st.subheader(_("yours.audit"))
for note in result.notes:
    st.info(note.text(controls.language), icon=":material/info:")
if result.recurrent:
    display.table(yours.audit_frame(result, seen.verification), key="yours-audit", static=True)
    verdict = "yours.verified.all" if seen.verification.agrees else "yours.verified.some"
    st.caption(_(verdict))
for pitfall in result.pitfalls:
    st.warning(pitfall.text(controls.language), icon=":material/warning:")
for suggestion in result.suggestions:
    st.info(suggestion.text(controls.language), icon=":material/lightbulb:")

st.subheader(_("yours.rewrite"))
if not seen.changes:
    st.caption(_("yours.rewrite.none"))
    st.stop()
for change in seen.changes:
    st.markdown(f"- `{change.path}`: `{change.before}` → `{change.after}`")
check = seen.check
st.markdown(
    _(
        "yours.check.match" if check.matches else "yours.check.differ",
        outputs=f"{check.output_diff:.3g}",
        gradients=f"{check.gradient_diff:.3g}",
    )
)
display.download(
    _("yours.download"), seen.rewritten, f"{seen.name}-rewritten.keras", "yours-download"
)

shapes = result.input_shapes
if controls.run:
    repeats = controls.timing.repeats
    work = lambda progress: yours.timed(str(path), sha256, shapes, repeats, progress)  # noqa: E731
    runs.start_run(KEY, work, [controls.config])
settings = {"sha256": sha256, "shapes": shapes}
outcome = runs.shown_result(KEY, _("yours.press_run"), settings)
if outcome is not None:
    st.subheader(_("yours.timing"))
    display.table(yours.timing_frame(outcome["timing"]), key="yours-timing", static=True)
    st.caption(_("yours.timing.caption"))
