"""A user's model at the sizes they give: every None dimension of its inputs named (batch, time,
...), each filled with the user's size or a default, and the model walked at those sizes by the
one walker (`hierlstm.model.walk`) that the Shape trace walks the variants with."""

from __future__ import annotations

import dataclasses

import keras

from hierlstm.model.walk import LayerStep, walk

DEFAULT_SIZES = {"batch": 2, "time": 8}
OTHER_SIZE = 4


@dataclasses.dataclass(frozen=True)
class FreeDimension:
    """A None dimension of a model input the user gives a size for."""

    name: str  # "batch", "time", "axis2", or "<input>.time" with several inputs
    input_index: int
    axis: int


def free_dimensions(model: keras.Model) -> list[FreeDimension]:
    """Every None dimension of the model's inputs, named: axis 0 "batch" (shared by all inputs);
    an input's only other None axis "time" (any axis: the question's is the third), else
    "axis<N>"; with several inputs, the non-batch names prefixed by the input's name."""
    found = []
    several = len(model.inputs) > 1
    for index, tensor in enumerate(model.inputs):
        free = [axis for axis, size in enumerate(tensor.shape) if size is None and axis]
        for axis, size in enumerate(tensor.shape):
            if size is not None:
                continue
            name = "batch" if axis == 0 else ("time" if len(free) == 1 else f"axis{axis}")
            if several and axis:
                name = f"{tensor.name}.{name}"
            found.append(FreeDimension(name, index, axis))
    return found


def default_size(name: str) -> int:
    return DEFAULT_SIZES.get(name.rsplit(".", 1)[-1], OTHER_SIZE)


def input_shapes(model: keras.Model, sizes: dict[str, int]) -> list[tuple]:
    """Each model input's concrete shape: its None dimensions from `sizes` (by
    `free_dimensions` name; a missing one takes `default_size`)."""
    shapes = [list(tensor.shape) for tensor in model.inputs]
    for dimension in free_dimensions(model):
        size = sizes.get(dimension.name, default_size(dimension.name))
        shapes[dimension.input_index][dimension.axis] = int(size)
    return [tuple(shape) for shape in shapes]


def trace_layers(model: keras.Model, sizes: dict[str, int]) -> list[LayerStep]:
    """One `LayerStep` per input, then per layer in graph order, children after their parent,
    at `sizes` (by `free_dimensions` name)."""
    return walk(model, input_shapes(model, sizes))
