"""Your own model: a user's Keras file opened safely, traced inside its wrappers, every recurrent
layer's kernel audited per backend with the first reason (the project's one cuDNN rule), the audit
checked on the graph traced as a GPU traces it, and the answer's advice applied where it is
mechanical (a rewrite, checked and timed). `hierlstm.audit(model, sizes)` is the audit; the
modules `audit`, `verify` and `rewrite` hold the rest."""

from hierlstm._lazy import lazy_exports

EXPORTS = {
    "Audit": "audit",
    "ModelFileError": "load",
    "inspect_file": "load",
    "load_model_file": "load",
    "free_dimensions": "walk",
    "trace_layers": "walk",
    "Verification": "verify",
    "Change": "rewrite",
    "FoldedTimeDistributed": "folded",
}

__all__ = sorted(EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, EXPORTS)
