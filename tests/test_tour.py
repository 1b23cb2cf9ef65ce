"""docs/tour.ipynb: stored without outputs (its diffs stay readable), and run top to bottom on a
real Jupyter kernel (nbclient and ipykernel) showing the app's tables and figures. The kernel is
this interpreter, registered under its own name in a temporary folder, so a fresh clone's .venv
runs it whatever kernels the machine has; it imports this checkout, and draws figures with
plotly's notebook renderer (plotly.js on the page), as docs/notebook.md converts the tour."""

import os
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
TOUR = ROOT / "docs" / "tour.ipynb"
KERNEL = "hierlstm-tour"


def code_cells(notebook) -> list:
    return [cell for cell in notebook.cells if cell.cell_type == "code"]


def test_the_tour_is_stored_without_outputs():
    notebook = nbformat.read(TOUR, as_version=4)
    nbformat.validate(notebook)
    cells = code_cells(notebook)
    assert len(cells) > 10
    assert [(cell.outputs, cell.execution_count) for cell in cells] == [([], None)] * len(cells)


@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    """The tour as nbclient leaves it: every cell run, its outputs kept."""
    from ipykernel.kernelspec import install
    from nbclient import NotebookClient

    folder = tmp_path_factory.mktemp("tour")
    install(prefix=str(folder), kernel_name=KERNEL)  # this interpreter, as the kernel
    notebook = nbformat.read(TOUR, as_version=4)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("JUPYTER_PATH", str(folder / "share" / "jupyter"))
        patch.setenv("PYTHONPATH", os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
        patch.setenv("PLOTLY_RENDERER", "notebook")
        client = NotebookClient(
            notebook, kernel_name=KERNEL, timeout=120, resources={"metadata": {"path": str(folder)}}
        )
        client.execute()  # CellExecutionError, naming the cell, if one raises
    return notebook


def shown(cell, mime: str) -> list[str]:
    return [output.data[mime] for output in cell.outputs if mime in output.get("data", {})]


def cell_with(notebook, text: str):
    (cell,) = [cell for cell in code_cells(notebook) if text in cell.source]
    return cell


def figures(html: str) -> int:
    """The plotly figures drawn by `html` (plotly.js itself, on the page once, draws none)."""
    return html.count('class="plotly-graph-div"')


def test_the_tour_shows_the_app_s_tables_and_figures_on_a_real_kernel(executed):
    from factories import html_tables

    outputs = [output for cell in code_cells(executed) for output in cell.outputs]
    assert [output for output in outputs if output.output_type == "error"] == []
    (html,) = shown(cell_with(executed, "trace_shapes"), "text/html")
    ((header, *rows),) = html_tables(html)
    assert header[:4] == ["step", "layer", "symbolic shape", "concrete shape"]
    assert rows[3][:4] == ["permute", "Permute", "(None, None, 12, 16)", "(2, 8, 12, 16)"]
    assert figures(shown(cell_with(executed, "axis_flow_figure"), "text/html")[-1]) == 1
    (html,) = shown(cell_with(executed, "compared = compare"), "text/html")
    assert [row[0] for row in html_tables(html)[0][1:]] == ["nested", "folded"]
    (html,) = shown(cell_with(executed, "hierlstm.audit("), "text/html")
    _layers, kernels = html_tables(html)
    assert [row[3] for row in kernels[1:]].count("cudnn") == 3  # the LSTM, on every backend
    (html,) = shown(cell_with(executed, 'audit.show("zh")'), "text/html")
    assert html_tables(html)[1][0][4:] == ["原因", "全部原因及各自的修改办法"]
    (html,) = shown(cell_with(executed, "notebook.scrubbers("), "text/html")
    assert figures(html) == 2  # without a widget frontend: the input and the inner LSTM
    (html,) = shown(cell_with(executed, "notebook.learn("), "text/html")[-1:]
    assert [row[0] for row in html_tables(html)[0][1:]] == ["0", "2", "4"]
    drawn = sum(figures(html) for cell in code_cells(executed) for html in shown(cell, "text/html"))
    assert drawn == 7  # flow, latency, scaling, two scrubbed views, agreement, the curve
