"""The same function as hierlstm's in PyTorch, as a PyTorch user writes it (Conv2d, MaxPool2d,
nn.LSTM over the (batch*time, rows, channels) sub-sequences, nn.LSTM over time), its weights
copied from hierlstm's parameters, its gradients read back under hierlstm's names, and a timer of
its forward pass and of its SGD step: the peer `vs_pytorch`, `gpu_peer` and `backends` time.
PyTorch is passed in (`torch`): importing this module does not import it."""

from __future__ import annotations

import time

import numpy as np

from hierlstm.model.loss import mean_squared_error
from hierlstm.model.optimizers import LEARNING_RATES


def torch_model(params, torch):
    """The same function in PyTorch, from hierlstm's parameters (gate order i, f, g, o matches
    Keras's i, f, c, o; PyTorch's second bias is set to zero and not trained)."""
    nn = torch.nn

    def tensor(array):
        return torch.from_numpy(np.ascontiguousarray(array))

    class Hierarchical(nn.Module):
        def __init__(self):
            super().__init__()
            kernel = params["conv_kernel"]  # (k, k, 1, C)
            channels = kernel.shape[-1]
            self.conv = nn.Conv2d(1, channels, kernel.shape[0], padding="same")
            self.pool = nn.MaxPool2d((3, 1))
            inner = params["inner_recurrent_kernel"].shape[0]
            self.inner = nn.LSTM(channels, inner, batch_first=True)
            self.outer = nn.LSTM(inner, params["outer_recurrent_kernel"].shape[0], batch_first=True)
            with torch.no_grad():
                self.conv.weight.copy_(tensor(kernel.transpose(3, 2, 0, 1)))
                self.conv.bias.copy_(tensor(params["conv_bias"]))
                for lstm, prefix in ((self.inner, "inner"), (self.outer, "outer")):
                    lstm.weight_ih_l0.copy_(tensor(params[f"{prefix}_kernel"].T))
                    lstm.weight_hh_l0.copy_(tensor(params[f"{prefix}_recurrent_kernel"].T))
                    lstm.bias_ih_l0.copy_(torch.from_numpy(params[f"{prefix}_bias"]))
                    lstm.bias_hh_l0.zero_()
                    # Kept at zero: trained, it would move the one bias Keras has twice as fast
                    # (b_ih + b_hh both step by the same gradient).
                    lstm.bias_hh_l0.requires_grad_(False)

        def forward(self, x):  # (B, H, T, 1)
            batch, _, steps, _ = x.shape
            x = x.permute(0, 3, 1, 2)  # -> (B, 1, H, T)
            x = self.pool(self.conv(x))  # -> (B, C, R, T)
            x = x.permute(0, 3, 2, 1)  # -> (B, T, R, C)
            rows, channels = x.shape[2], x.shape[3]
            folded = x.reshape(batch * steps, rows, channels)  # -> (B*T, R, C)
            _, (hidden, _) = self.inner(folded)  # hidden: (1, B*T, inner)
            summaries = hidden[0].reshape(batch, steps, -1)  # -> (B, T, inner)
            outputs, _ = self.outer(summaries)  # -> (B, T, outer)
            return outputs

    return Hierarchical().eval()


def torch_gradients(model) -> dict[str, np.ndarray]:
    """PyTorch's parameter gradients under hierlstm's names and layouts (the trained bias_ih is
    Keras's one bias)."""
    grads = {
        "conv_kernel": model.conv.weight.grad.numpy().transpose(2, 3, 1, 0),
        "conv_bias": model.conv.bias.grad.numpy(),
    }
    for lstm, prefix in ((model.inner, "inner"), (model.outer, "outer")):
        grads[f"{prefix}_kernel"] = lstm.weight_ih_l0.grad.numpy().T
        grads[f"{prefix}_recurrent_kernel"] = lstm.weight_hh_l0.grad.numpy().T
        grads[f"{prefix}_bias"] = lstm.bias_ih_l0.grad.numpy()
    return grads


def forward_timer(model, inputs, torch, cuda: bool = False):
    """One timed forward pass of a PyTorch model (seconds), ended by a CUDA sync on a GPU."""

    def call() -> float:
        with torch.inference_mode():
            start = time.perf_counter()
            model(inputs)
            if cuda:
                torch.cuda.synchronize()
            return time.perf_counter() - start

    return call


def training_timer(model, inputs, target, torch):
    """One timed SGD step of a PyTorch model (seconds), on hierlstm's loss and learning rate."""
    optimizer = torch.optim.SGD(model.parameters(), lr=LEARNING_RATES["sgd"])

    def step() -> float:
        start = time.perf_counter()
        optimizer.zero_grad(set_to_none=True)
        mean_squared_error(model(inputs), target, torch.mean).backward()
        optimizer.step()
        return time.perf_counter() - start

    return step
