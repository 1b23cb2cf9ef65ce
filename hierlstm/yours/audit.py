"""The audit of a user's model: every recurrent layer (LSTM, GRU, SimpleRNN, RNN over any cell,
inside Bidirectional, TimeDistributed and nested models too) with the kernel a GPU would run per
Keras backend and the first reason when it is not cuDNN, the project's one rule per backend
(`hierlstm.model.cudnn.layer_reasons`) read from the layer's own arguments; the pitfalls beside it;
what the rewrite can fix and what only a changed argument can (`suggestions`). A notebook shows an
`Audit` as the Your model page's tables."""

from __future__ import annotations

import dataclasses

import keras

from hierlstm.i18n import DEFAULT_LANGUAGE, t
from hierlstm.model.cudnn import RecurrentFacts, layer_reasons
from hierlstm.model.walk import LayerStep
from hierlstm.registry import BACKEND_RECORDS, KERAS_BACKENDS  # one cuDNN rule each
from hierlstm.tables import Shown, Table
from hierlstm.yours.walk import default_size, free_dimensions, input_shapes, trace_layers

# A reason only a changed argument fixes, and the suggestion that names what it changes.
SUGGESTIONS = {
    "kernel.why.activation": "yours.suggest.activation",
    "kernel.why.recurrent_activation": "yours.suggest.recurrent_activation",
    "kernel.why.recurrent_dropout": "yours.suggest.recurrent_dropout",
    "kernel.why.unroll": "yours.suggest.unroll",
    "kernel.why.use_bias": "yours.suggest.use_bias",
    "kernel.why.reset_after": "yours.suggest.reset_after",
    "kernel.why.requested": "yours.suggest.use_cudnn",
    "kernel.why.simple_rnn": "yours.suggest.simple_rnn",
    "kernel.why.cell": "yours.suggest.custom_cell",
}
# Every reason the audit can list (a GPU and a CUDA build assumed), and the fix for each.
FIXES = {
    **SUGGESTIONS,
    "kernel.why.xla": "yours.fix.xla",
    "kernel.why.masked": "yours.fix.masked",
    "kernel.why.compiling": "yours.fix.compiling",
    "kernel.why.gru_jax": "yours.fix.gru_jax",
}


@dataclasses.dataclass(frozen=True)
class Kernel:
    """What a GPU would run for one layer on one backend: "cudnn", "generic", or "fails" (cuDNN's
    op inside XLA: TensorFlow under jit_compile=True), and the reason's catalogue key."""

    kernel: str
    reason: str  # "" when cuDNN runs: the first of `reasons`, the one Keras meets first
    reasons: tuple[str, ...] = ()  # every condition the layer fails on this backend

    def text(self, lang: str = "en") -> str:
        return t(self.reason or "yours.why.cudnn", lang)

    def every(self, layer: str, lang: str = "en") -> list[dict[str, str]]:
        """Each reason with its text and the fix for `layer`: [{"reason", "why", "fix"}]."""
        return [
            {
                "reason": reason,
                "why": t(reason, lang),
                "fix": t(FIXES[reason], lang, layer=layer) if reason in FIXES else "",
            }
            for reason in self.reasons
        ]


@dataclasses.dataclass(frozen=True)
class RecurrentRow:
    path: str
    layer: str  # Keras class name ("RNN(LSTMCell)" for an RNN over a cell)
    facts: RecurrentFacts
    kernels: dict[str, Kernel]  # by backend
    stateful: bool = False

    def to_dict(self, lang: str = "en") -> dict:
        return {
            "path": self.path,
            "layer": self.layer,
            "facts": dataclasses.asdict(self.facts),
            "stateful": self.stateful,
            "kernels": {
                backend: {
                    "kernel": k.kernel,
                    "reason": k.reason,
                    "why": k.text(lang),
                    "reasons": k.every(self.path, lang),
                }
                for backend, k in self.kernels.items()
            },
        }


@dataclasses.dataclass(frozen=True)
class Message:
    """A catalogue key with its values: a pitfall, a suggestion, a note."""

    key: str
    values: dict

    def text(self, lang: str = "en") -> str:
        return t(self.key, lang, **self.values)

    def to_dict(self, lang: str = "en") -> dict:
        return {"key": self.key, "values": dict(self.values), "text": self.text(lang)}


@dataclasses.dataclass(frozen=True, repr=False)
class Audit(Shown):
    """`hierlstm.audit(model, sizes)`: the trace, the recurrent layers' kernels, the pitfalls,
    the suggestions and the notes, at the sizes given for the model's None dimensions. A
    notebook shows it as two tables, every layer and the recurrent layers' kernels per backend
    with the pitfalls and suggestions below (`show("zh")`: in Chinese)."""

    model_name: str
    sizes: dict[str, int]
    input_shapes: list[tuple]
    steps: list[LayerStep]
    recurrent: list[RecurrentRow]
    pitfalls: list[Message]
    suggestions: list[Message]
    notes: list[Message]
    jit_compile: bool = False
    torch_compile: bool = False

    @property
    def uncounted(self) -> list[str]:
        """Layers whose FLOPs no formula counts."""
        return [step.path for step in self.steps if step.flops is None]

    @property
    def flops(self) -> int:
        return sum(step.flops or 0 for step in self.steps if step.depth == 0)

    def to_dict(self, lang: str = "en") -> dict:
        return {
            "model": self.model_name,
            "sizes": dict(self.sizes),
            "input_shapes": [list(shape) for shape in self.input_shapes],
            "jit_compile": self.jit_compile,
            "torch_compile": self.torch_compile,
            "flops": self.flops,
            "uncounted": self.uncounted,
            "steps": [step.to_dict() for step in self.steps],
            "recurrent": [row.to_dict(lang) for row in self.recurrent],
            "pitfalls": [m.to_dict(lang) for m in self.pitfalls],
            "suggestions": [m.to_dict(lang) for m in self.suggestions],
            "notes": [m.to_dict(lang) for m in self.notes],
        }

    def layer_table(self, lang: str = DEFAULT_LANGUAGE):
        """Every layer, wrappers' and cells' insides indented: class, symbolic and concrete
        shape, parameters, FLOPs ("-" where no formula counts them), headed in `lang`."""
        import pandas as pd

        rows = [
            {
                t("yours.col.layer", lang): "   " * (step.depth - 1)
                + "↳ " * bool(step.depth)
                + step.path,
                t("yours.col.class", lang): step.layer,
                t("yours.col.symbolic", lang): str(step.symbolic_shape),
                t("yours.col.concrete", lang): str(step.concrete_shape),
                t("yours.col.params", lang): f"{step.params:,}",
                t("yours.col.flops", lang): "-" if step.flops is None else f"{step.flops:,}",
            }
            for step in self.steps
        ]
        return pd.DataFrame(rows)

    def kernel_table(self, lang: str = DEFAULT_LANGUAGE, verification=None):
        """A row per recurrent layer and backend: the kernel a GPU runs and why, headed in
        `lang`; with a `hierlstm.yours.verify.Verification`, also whether the graph traced here
        (TensorFlow's) agrees."""
        import pandas as pd

        agrees = {check.path: check.agrees for check in verification.layers} if verification else {}
        rows = []
        for row in self.recurrent:
            for backend, kernel in row.kernels.items():
                cells = {
                    t("yours.col.layer", lang): row.path,
                    t("yours.col.class", lang): row.layer,
                    t("yours.col.backend", lang): backend,
                    t("yours.col.kernel", lang): kernel.kernel,
                }
                if verification is not None:
                    verified = ""
                    if BACKEND_RECORDS[backend].in_process:  # the graph traced here
                        verified = "yours.verified.yes" if agrees[row.path] else "yours.verified.no"
                    cells[t("yours.col.verified", lang)] = t(verified, lang) if verified else ""
                cells[t("yours.col.why", lang)] = kernel.text(lang)
                cells[t("yours.col.every", lang)] = "\n".join(
                    f"{found['why']}: {found['fix']}" if found["fix"] else found["why"]
                    for found in kernel.every(row.path, lang)
                )
                rows.append(cells)
        return pd.DataFrame(rows)

    def tables(self, lang: str = DEFAULT_LANGUAGE) -> list[Table]:
        uncounted = (t("yours.uncounted", lang, layers=", ".join(self.uncounted)),)
        messages = (*self.notes, *self.pitfalls, *self.suggestions)
        return [
            Table(
                t("yours.layers", lang, name=self.model_name),
                self.layer_table(lang),
                uncounted if self.uncounted else (),
            ),
            Table(
                t("yours.audit", lang),
                self.kernel_table(lang),
                tuple(message.text(lang) for message in messages),
            ),
        ]


def _name(function) -> str:
    return getattr(function, "__name__", type(function).__name__)


def recurrent_layers(model: keras.Model, steps: list[LayerStep]) -> list[tuple[LayerStep, object]]:
    """(step, layer object) of every recurrent layer the trace found, in its order."""
    objects = dict(_layers_by_path(model, ""))
    return [
        (step, objects[step.path])
        for step in steps
        if isinstance(objects.get(step.path), keras.layers.RNN)
    ]


def _layers_by_path(layer, prefix: str):
    """(path, layer) of every layer at any depth, named as `trace_layers` names them."""
    children = []
    if isinstance(layer, keras.Model):
        children = layer.layers
    elif isinstance(layer, keras.layers.TimeDistributed):
        children = [layer.layer]
    elif isinstance(layer, keras.layers.Bidirectional):
        children = [layer.forward_layer, layer.backward_layer]
    elif hasattr(layer, "layer") and isinstance(layer.layer, keras.layers.Layer):
        children = [layer.layer]  # another wrapper (hierlstm's folded one)
    elif isinstance(layer, keras.layers.RNN) and not isinstance(layer.cell, keras.layers.Layer):
        children = []
    elif isinstance(layer, keras.layers.RNN):  # its cell, and a custom cell's recurrent layers
        yield f"{prefix}{layer.cell.name}", layer.cell
        inner = [
            sub for sub in getattr(layer.cell, "_layers", []) if isinstance(sub, keras.layers.RNN)
        ]
        for sub in inner:
            path = f"{prefix}{layer.cell.name}/{sub.name}"
            yield path, sub
            yield from _layers_by_path(sub, f"{path}/")
    for child in children:
        if isinstance(child, keras.layers.InputLayer):
            continue
        path = f"{prefix}{child.name}"
        yield path, child
        yield from _layers_by_path(child, f"{path}/")


def facts_of(layer, masked: bool) -> RecurrentFacts:
    """A recurrent layer's facts as the rule reads them."""
    cell = layer.cell
    kind = {
        keras.layers.LSTM: "lstm",
        keras.layers.GRU: "gru",
        keras.layers.SimpleRNN: "simple_rnn",
    }
    return RecurrentFacts(
        kind=next((k for cls, k in kind.items() if isinstance(layer, cls)), "cell"),
        use_cudnn=getattr(layer, "use_cudnn", "auto"),
        activation=_name(getattr(cell, "activation", None)),
        recurrent_activation=_name(
            getattr(cell, "recurrent_activation", keras.activations.sigmoid)
        ),
        recurrent_dropout=float(getattr(cell, "recurrent_dropout", 0.0) or 0.0),
        unroll=bool(layer.unroll),
        use_bias=bool(getattr(cell, "use_bias", True)),
        reset_after=bool(getattr(cell, "reset_after", True)),
        masked=masked,
    )


def layer_label(layer) -> str:
    if isinstance(layer, keras.layers.LSTM | keras.layers.GRU | keras.layers.SimpleRNN):
        return type(layer).__name__
    return f"RNN({type(layer.cell).__name__})"


def kernels_of(facts: RecurrentFacts, jit_compile: bool, torch_compile: bool) -> dict[str, Kernel]:
    """The kernel on each backend on a machine with a CUDA build and a GPU: the one rule, and on
    TensorFlow under jit_compile=True a layer that would take cuDNN without it "fails" (Keras
    emits cuDNN's op inside XLA, which has no kernel for it)."""
    kernels = {}
    for backend in KERAS_BACKENDS:
        reasons = layer_reasons(
            backend,
            facts,
            cuda_build=True,
            gpu_visible=True,
            jit_compile=jit_compile,
            compiling=torch_compile,
        )
        reason = reasons[0] if reasons else ""
        kernel = "cudnn" if not reason else "generic"
        if reason == "kernel.why.xla":
            kernel = "fails"
        kernels[backend] = Kernel(kernel, reason, reasons)
    return kernels


def audit(
    model: keras.Model,
    sizes: dict[str, int] | None = None,
    *,
    jit_compile: bool = False,
    torch_compile: bool = False,
) -> Audit:
    """The audit of `model` at `sizes` (a size for each None dimension of its inputs, named as
    `free_dimensions` names them; a missing one takes its default). `jit_compile`: TensorFlow runs
    it under XLA; `torch_compile`: PyTorch runs it under torch.compile."""
    sizes = dict(sizes or {})
    known = {dimension.name for dimension in free_dimensions(model)}
    unknown = sorted(set(sizes) - known)
    if unknown:
        raise ValueError(
            f"no None dimension named {', '.join(unknown)}; this model's are: "
            f"{', '.join(sorted(known)) or 'none'}."
        )
    steps = trace_layers(model, sizes)
    rows = []
    for step, layer in recurrent_layers(model, steps):
        facts = facts_of(layer, step.masked)
        rows.append(
            RecurrentRow(
                path=step.path,
                layer=layer_label(layer),
                facts=facts,
                kernels=kernels_of(facts, jit_compile, torch_compile),
                stateful=bool(layer.stateful),
            )
        )
    return Audit(
        model_name=model.name,
        sizes={d.name: sizes.get(d.name, default_size(d.name)) for d in free_dimensions(model)},
        input_shapes=input_shapes(model, sizes),
        steps=steps,
        recurrent=rows,
        pitfalls=_pitfalls(model, steps, rows, jit_compile),
        suggestions=_suggestions(rows, steps),
        notes=[] if rows else [Message("yours.note.no_recurrent", {})],
        jit_compile=jit_compile,
        torch_compile=torch_compile,
    )


def _pitfalls(model, steps, rows, jit_compile) -> list[Message]:
    found = []
    for step in steps:
        if step.layer == "TimeDistributed" and step.symbolic_shape[1:2] == (None,):
            found.append(Message("yours.pitfall.td_unknown", {"layer": step.path}))
    cudnn_tf = [row.path for row in rows if row.kernels["tensorflow"].kernel == "cudnn"]
    if cudnn_tf and not jit_compile:
        found.append(Message("yours.pitfall.jit_auto", {"layers": ", ".join(cudnn_tf)}))
    for row in rows:
        if row.stateful:
            found.append(Message("yours.pitfall.stateful", {"layer": row.path}))
        if row.facts.masked and row.kernels["tensorflow"].kernel == "cudnn":
            found.append(Message("yours.pitfall.mask_tf", {"layer": row.path}))
        if row.kernels["tensorflow"].kernel == "fails":
            found.append(Message("yours.pitfall.xla_fails", {"layer": row.path}))
    return found


def _suggestions(rows, steps) -> list[Message]:
    """For each layer off cuDNN because of one of its own arguments: the argument to change and
    what changing it changes. An RNN over a Keras LSTMCell or GRUCell is rewritten instead."""
    found = []
    for row in rows:
        reason = row.kernels["tensorflow"].reason
        if reason == "kernel.why.cell" and row.layer in ("RNN(LSTMCell)", "RNN(GRUCell)"):
            continue  # the rewrite makes it an LSTM or a GRU
        if reason in SUGGESTIONS:
            found.append(Message(SUGGESTIONS[reason], {"layer": row.path}))
    return found
