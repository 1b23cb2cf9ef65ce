"""The import direction of the package and of the benchmarks, checked over every module (not a
hand-written list): the layers of each tree import one way, the benchmarks' two concerns import
neither each other nor the library the benchmarks, only the app imports Streamlit, the settings
and the arithmetic import neither TensorFlow nor Keras, and no modules import each other in a
cycle, function-level imports included."""

import ast
import json
from pathlib import Path

import pytest
from factories import python

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "hierlstm"
# Each layer may import only the layers before it in this list (and itself).
LAYERS = (
    (
        "hierlstm._lazy",
        "hierlstm._native",
        "hierlstm.i18n",
        "hierlstm.config",
        "hierlstm.settings",
        "hierlstm.registry",
        "hierlstm.records",
        "hierlstm.tables",
    ),
    ("hierlstm.refusals",),
    ("hierlstm.hardware",),
    ("hierlstm.model",),
    ("hierlstm.inside",),
    ("hierlstm.distributed",),
    ("hierlstm.timing",),
    ("hierlstm.admission",),
    ("hierlstm.profiling",),
    ("hierlstm.yours",),
    ("hierlstm.results",),
    ("hierlstm.backends",),
    ("hierlstm.measure",),
    ("hierlstm.charts",),
    ("hierlstm.notebook",),
    ("hierlstm.app", "hierlstm.cli"),
    ("hierlstm.__main__",),
)
# The benchmarks' layers, the same way: the helpers both concerns share, the two concerns (the
# model's benchmarks, the serving harnesses), then the registry that runs them by name.
BENCHMARK_LAYERS = (
    ("benchmarks.record",),
    ("benchmarks.common",),
    ("benchmarks.model", "benchmarks.serving"),
    ("benchmarks.registry",),
    ("benchmarks.__main__",),
)
TREES = {"hierlstm": LAYERS, "benchmarks": BENCHMARK_LAYERS}  # a tree's top package: its layers
CONCERNS = ("benchmarks.model", "benchmarks.serving")
# Modules that import neither TensorFlow, Keras nor Streamlit, each checked in a fresh process;
# every chart module found by name, so that a new one is checked too.
PURE = """config settings registry i18n records tables notebook refusals model.cost model.cudnn
model.trace_notes model.shapes timing.basics timing.summary timing.rounds timing.rss timing.points
backends backends.worker backends.dispatch
backends.kernels backends.runners.tensorflow backends.runners.jax backends.runners.torch
backends.runners.onnxruntime backends.runners.openvino backends.runners.runtime
hardware.cpu hardware.gpu hardware.nvidia admission.limits admission.estimate
distributed.distribute distributed.cluster results.diff app.diff_view charts inside
inside.sounds inside.wav inside.provenance inside.learning inside.whatif
inside.hidden_map""".split()
PURE += [f"charts.{path.stem}" for path in sorted((PACKAGE / "charts").glob("[!_]*.py"))]


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def lazy_exports(package_path: Path) -> dict[str, str]:
    """A package's `EXPORTS` (name -> module, `hierlstm._lazy`), read from its source."""
    for node in ast.parse(package_path.read_text()).body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "EXPORTS":
            return ast.literal_eval(node.value)
    return {}


def imports_of(path: Path) -> set[str]:
    """Every module `path` imports, at any depth of its code (inside functions too); a name
    imported through a package's lazy exports counts as an import of the module defining it."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module)
            # `from hierlstm.app import state` imports the module hierlstm.app.state.
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
            init = ROOT.joinpath(*node.module.split("."), "__init__.py")
            if init.exists():
                exports = lazy_exports(init)
                found.update(
                    f"{node.module}.{exports[alias.name]}"
                    for alias in node.names
                    if alias.name in exports
                )
    return found


MODULES = {
    module_name(path): path for tree in TREES for path in sorted((ROOT / tree).rglob("*.py"))
}
CORE = {name: path for name, path in MODULES.items() if name.split(".")[0] == "hierlstm"}
GRAPH = {
    name: {found for found in imports_of(path) if found in MODULES and found != name}
    for name, path in MODULES.items()
}


def layer_of(name: str) -> int:
    for index, prefixes in enumerate(TREES[name.split(".")[0]]):
        if any(name == prefix or name.startswith(prefix + ".") for prefix in prefixes):
            return index
    raise AssertionError(f"{name} is in no layer of LAYERS; add it where it belongs")


def test_every_module_is_found_and_in_a_layer():
    assert {"hierlstm.config", "hierlstm.app.runs", "hierlstm.timing.harness"} <= set(MODULES)
    assert {"benchmarks.model.vs_pytorch", "benchmarks.serving.soak"} <= set(MODULES)
    assert {"charts.axis_flow", "charts.bars", "charts.scaling"} <= set(PURE)
    for name in set(MODULES) - set(TREES):
        layer_of(name)


def tree_of(name: str) -> str:
    return name.split(".")[0]


def test_imports_go_one_way():
    backwards = {
        name: sorted(
            found
            for found in GRAPH[name]
            if found not in TREES
            and tree_of(found) == tree_of(name)
            and layer_of(found) > layer_of(name)
        )
        for name in sorted(set(MODULES) - set(TREES))
    }
    assert {name: up for name, up in backwards.items() if up} == {}, (
        "modules importing a layer above"
    )


def test_the_library_imports_no_benchmark_and_the_concerns_not_each_other():
    crossing = {
        name: sorted(
            found
            for found in GRAPH[name]
            if (tree_of(name) == "hierlstm" and tree_of(found) == "benchmarks")
            or any(
                name.startswith(mine + ".") and found.startswith(other + ".")
                for mine in CONCERNS
                for other in CONCERNS
                if mine != other
            )
        )
        for name in MODULES
    }
    assert {name: found for name, found in crossing.items() if found} == {}
    # The check sees what the benchmarks import, function-level imports included.
    assert "benchmarks.serving.browser" in GRAPH["benchmarks.registry"]
    assert "benchmarks.model.torch_peer" in GRAPH["benchmarks.model.backends"]


def test_only_the_app_imports_streamlit():
    importers = [
        name
        for name, path in CORE.items()
        if any(found.split(".")[0] == "streamlit" for found in imports_of(path))
    ]
    assert importers and all(name.startswith("hierlstm.app.") for name in importers), importers


def test_no_import_cycles():
    """Depth-first search for a back edge in the module graph (every import, any depth)."""
    state: dict[str, str] = {}
    path: list[str] = []

    def visit(name):
        state[name] = "open"
        path.append(name)
        for found in sorted(GRAPH[name]):
            if state.get(found) == "open":
                cycle = path[path.index(found) :] + [found]
                raise AssertionError("import cycle: " + " -> ".join(cycle))
            if found not in state:
                visit(found)
        path.pop()
        state[name] = "done"

    for name in sorted(GRAPH):
        if name not in state:
            visit(name)


def _loaded_after(code: str) -> set[str]:
    completed = python("-c", code + "; import sys; print(' '.join(sorted(sys.modules)))")
    assert completed.returncode == 0, completed.stderr[-2000:]
    return set(completed.stdout.split())


# Each pure module imported in turn in one fresh process: the first after which TensorFlow,
# Keras or Streamlit is loaded is the one that imports it (none had, before it).
_IMPORT_EACH = """
import importlib, json, sys
heavy = {"tensorflow", "keras", "streamlit"}
for name in json.loads(sys.argv[1]):
    importlib.import_module("hierlstm." + name)
    if heavy & set(sys.modules):
        print(name, " ".join(sorted(heavy & set(sys.modules))))
        break
"""


def test_settings_and_arithmetic_import_neither_tensorflow_nor_keras():
    completed = python("-c", _IMPORT_EACH, json.dumps(PURE))
    assert completed.returncode == 0, completed.stderr[-2000:]
    assert completed.stdout == ""  # else: the module that loaded them, and what it loaded


def test_the_pure_modules_check_names_the_module_that_imports_tensorflow():
    """The check above can fail: a module that imports Streamlit is named, with what it loaded."""
    completed = python("-c", _IMPORT_EACH, json.dumps(["config", "app.state", "charts"]))
    assert completed.stdout.split() == ["app.state", "streamlit"], completed.stderr[-2000:]


def test_a_run_config_costs_no_tensorflow():
    code = (
        "from hierlstm.config import RunConfig; from hierlstm.model import cost; "
        "from hierlstm.admission import estimate, limits; "
        "config = RunConfig(variant='folded', batch_size=2, time_steps=3); "
        "cost.model_flops(config); limits.memory_estimate_bytes(config)"
    )
    assert not {"tensorflow", "keras"} & _loaded_after(code)


def _top_level_imports(path: Path) -> list[str]:
    """The file's top-level import statements of hierlstm, as written (`from M import f` too)."""
    statements = []
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            names = [node.module or ""]
        else:
            continue
        if any(name.startswith("hierlstm") for name in names):
            statements.append(ast.unparse(node))
    return statements


@pytest.mark.parametrize("script", ["app.py", "streamlit_app.py"])
def test_the_frame_imports_no_tensorflow(script):
    """The frame is drawn while the warm-up imports TensorFlow: what app.py and the frame
    import at their top must not import it (the warm-up's steps import what they use)."""
    imports = _top_level_imports(ROOT / script)
    assert imports, f"{script} imports nothing of hierlstm?"
    loaded = _loaded_after("; ".join(["import streamlit", *imports]))
    assert not {"tensorflow", "keras"} & loaded, imports


def test_core_imports_without_streamlit():
    core = [name for name in CORE if not name.startswith(("hierlstm.app", "hierlstm.__main__"))]
    loaded = _loaded_after("; ".join(f"import {name}" for name in core))
    assert "tensorflow" in loaded and "streamlit" not in loaded  # the whole core, loaded


def test_import_hierlstm_is_lazy():
    assert "tensorflow" not in _loaded_after("import hierlstm")


def test_every_module_says_what_it_is_for():
    silent = [
        name
        for name, path in MODULES.items()
        if len((ast.get_docstring(ast.parse(path.read_text())) or "").split()) < 5
    ]
    assert silent == [], "modules without a docstring saying what they are for"


PACKAGES_WITH_EXPORTS = sorted(
    module_name(path.parent) for path in PACKAGE.rglob("__init__.py") if lazy_exports(path)
)


@pytest.mark.parametrize("package", PACKAGES_WITH_EXPORTS)
def test_every_lazy_export_is_the_object_its_module_defines(package):
    import importlib

    exported = importlib.import_module(package)
    exports = lazy_exports(MODULES[package])
    modules = getattr(exported, "MODULES", ())  # a package's modules it names (charts')
    assert sorted(dir(exported)) == sorted([*exports, *modules])
    for name, module in exports.items():
        assert getattr(exported, name) is getattr(
            importlib.import_module(f"{package}.{module}"), name
        ), name
    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        exported.nope  # noqa: B018


def test_the_concern_packages_are_there():
    concerns = ("admission", "distributed", "hardware", "inside", "profiling", "timing", "yours")
    with_exports = ["hierlstm", "hierlstm.charts", *(f"hierlstm.{name}" for name in concerns)]
    assert PACKAGES_WITH_EXPORTS == sorted(with_exports)
