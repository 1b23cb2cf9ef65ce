"""One variant on several devices and machines with `tf.distribute`: "mirrored" over
`RunConfig.devices`, else every GPU, else every logical CPU; "multi_worker" over the TF_CONFIG
cluster (`set_cluster`). `batch_size` is global: replica i runs rows [i*b, (i+1)*b) of one input, so
gathered outputs line up with a single-device run; an uneven split is refused."""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import math
from collections.abc import Callable

import numpy as np

from hierlstm.config import RunConfig, SettingError, per_replica_batch
from hierlstm.distributed.cluster import (
    is_local_device,
    local_devices,
    replica_device_specs,
    require_cluster,
    short_name,
)
from hierlstm.records import BenchResult

# Variants that cannot run under a strategy, with the reason a failed result gives; none today
# (tests/test_distribute.py runs each).
UNSUPPORTED: dict[str, str] = {}


# --- planning: how many replicas, without starting TensorFlow's runtime ---------------------


def planned_replicas(config: RunConfig) -> int:
    """How many replicas `config` will run on, without starting TensorFlow's runtime (the trace
    uses it): the named devices, else the GPUs, else the configured logical CPUs; for
    multi_worker, workers x (GPUs per worker, or one CPU)."""
    if config.strategy == "none":
        return 1
    import tensorflow as tf

    gpus = len(tf.config.list_physical_devices("GPU"))
    if config.strategy == "mirrored":
        if config.device_list:
            return len(config.device_list)
        cpu = tf.config.list_physical_devices("CPU")[0]
        return gpus or len(tf.config.get_logical_device_configuration(cpu) or [None])
    return len(require_cluster(config)[0]) * max(gpus, 1)


# --- the strategy, and the plan of a run -----------------------------------------------------


def _resolve(spec: str) -> str:
    kind, index = spec.upper().split(":")
    names = local_devices(kind)
    if int(index) >= len(names):
        shown = ", ".join(f"{kind.lower()}:{i}" for i in range(len(names))) or "none"
        hint = " (split the CPU with --logical-cpus N)" if kind == "CPU" else ""
        raise SettingError(
            f"devices names {spec}, but this process sees {len(names)} {kind} device(s): "
            f"{shown}{hint}."
        )
    return names[int(index)]


@functools.lru_cache(maxsize=16)
def _mirrored(devices: tuple[str, ...]):
    import tensorflow as tf

    return tf.distribute.MirroredStrategy(list(devices))


@functools.lru_cache(maxsize=1)
def multi_worker_strategy():
    """This process's one `MultiWorkerMirroredStrategy` (TF_CONFIG must be set). TensorFlow
    configures collective ops when it is made, which must precede every other op: make it
    first thing in the process (the CLI's `worker` does)."""
    import tensorflow as tf

    require_cluster(RunConfig(strategy="multi_worker"))
    try:
        return tf.distribute.MultiWorkerMirroredStrategy()
    except RuntimeError as error:
        raise SettingError(
            "strategy multi_worker must be set up before TensorFlow runs anything in the "
            f"process; start it with `python -m hierlstm worker ...` ({error})."
        ) from None


def make_strategy(config: RunConfig):
    """The `tf.distribute.Strategy` of `config` (cached: one per device set, one cluster)."""
    if config.strategy == "multi_worker":
        return multi_worker_strategy()
    if config.strategy != "mirrored":
        raise SettingError(
            f"make_strategy needs strategy mirrored or multi_worker; got {config.strategy!r}."
        )
    return _mirrored(tuple(_resolve(spec) for spec in replica_device_specs(config)))


@dataclasses.dataclass(frozen=True)
class Plan:
    """A strategy made for a config, and what the run will look like."""

    strategy: object  # tf.distribute.Strategy
    replicas: int  # over every worker
    per_replica_batch: int
    workers: int
    devices: tuple[str, ...]  # this process's replica devices, full names
    label: str  # BenchResult.device, e.g. "mirrored over /CPU:0, /CPU:1 (x86_64, 2 cores)"


def plan(config: RunConfig) -> Plan:
    """Makes the strategy and checks the run can happen; ValueError in one sentence if not."""
    import tensorflow as tf

    from hierlstm.hardware import device_string

    if config.variant in UNSUPPORTED:
        raise SettingError(UNSUPPORTED[config.variant])
    strategy = make_strategy(config)
    devices = tuple(strategy.extended.worker_devices)
    shorts = [short_name(name) for name in devices]
    if (
        config.lstm_kernel == "auto"
        and shorts[0].startswith("/CPU")
        and tf.config.list_logical_devices("GPU")
    ):
        raise SettingError(
            "replicas on CPU devices need lstm_kernel generic on a machine with a GPU: Keras "
            "takes the cuDNN path whenever a GPU is visible, wherever the replica runs."
        )
    replicas = int(strategy.num_replicas_in_sync)
    batch = per_replica_batch(config.batch_size, replicas)
    detail = device_string(shorts[0]).partition(" ")[2]  # "(x86_64, 2 cores)", "(NVIDIA A100)"
    if config.strategy == "multi_worker":
        workers = len(require_cluster(config)[0])
        label = f"multi_worker over {workers} workers x {', '.join(shorts)} {detail}".rstrip()
    else:
        workers = 1
        label = f"mirrored over {', '.join(shorts)} {detail}".rstrip()
    return Plan(strategy, replicas, batch, workers, devices, label)


def one_replica_config(config: RunConfig, run_plan: Plan) -> RunConfig:
    """The scaling baseline: one replica (this process's first replica device) running the
    per-replica batch, under `MirroredStrategy` so it is timed by the very same code path."""
    spec = short_name(run_plan.devices[0]).lstrip("/").lower()
    return config.replace(strategy="mirrored", devices=spec, batch_size=run_plan.per_replica_batch)


# --- running on every replica ---------------------------------------------------------------


class ReplicatedForward:
    """`model` (built in `strategy.scope()`) on every replica, as two `tf.function`s: `step(inputs)
    -> scalar`, every replica's forward pass then a cross-replica sum of output sums, so no work is
    skipped and the step returns only when every worker has finished it (the clock stops at one
    point of agreement); `gather(inputs) -> (batch, time, outer_units)`, every replica's outputs in
    order, for checks, never timed."""

    def __init__(self, strategy, model, *, xla: bool):
        import tensorflow as tf

        self._tf = tf
        self.strategy = strategy
        self._model = model
        self._xla = xla
        self._per_device: dict[int | None, Callable] = {}
        # autograph off: the Python dictionary lookup in `_forward` is tracing logic, not a
        # graph conditional.
        self.step = tf.function(self._step, autograph=False)
        self.gather = tf.function(self._gather, autograph=False)

    def _forward(self, inputs):  # (b, H, T, 1) -> (b, T, outer) on this replica's device
        tf = self._tf
        # One traced function per replica: one function traced on replica 0 and called on
        # replica 1 would read replica 0's variables, which XLA refuses ("variable on a
        # different device"). Keyed by the replica's number, a constant while tracing (the
        # context's `devices` fails under MultiWorkerMirroredStrategy).
        replica_id = tf.distribute.get_replica_context().replica_id_in_sync_group
        static_id = tf.get_static_value(replica_id)
        key = None if static_id is None else int(static_id)
        if key not in self._per_device:
            self._per_device[key] = tf.function(
                lambda values: self._model(values, training=False), jit_compile=self._xla
            )
        return self._per_device[key](inputs)

    def _step(self, per_replica_inputs):
        tf = self._tf
        totals = self.strategy.run(
            lambda inputs: tf.reduce_sum(tf.cast(self._forward(inputs), tf.float32)),
            args=(per_replica_inputs,),
        )
        return self.strategy.reduce(tf.distribute.ReduceOp.SUM, totals, axis=None)

    def _gather(self, per_replica_inputs):
        outputs = self.strategy.run(self._forward, args=(per_replica_inputs,))
        return self.strategy.gather(outputs, axis=0)  # (replicas * b, T, outer)


def distribute_inputs(strategy, global_inputs: np.ndarray, batch: int):
    """The global (B, H, T, 1) input per replica: replica i holds rows [i*batch, (i+1)*batch) on its
    own device (a slice left on CPU:0 would be copied every step). Values from a function rather
    than a dataset: the split is ours and deterministic, and made once, so no input pipeline is
    timed."""
    import tensorflow as tf

    devices = strategy.extended.worker_devices  # this worker's replicas, in replica order

    def replica_slice(context):
        replica = context.replica_id_in_sync_group  # numbered across every worker
        start = replica * batch
        with tf.device(devices[replica % len(devices)]):
            return tf.identity(tf.constant(global_inputs[start : start + batch]))

    return strategy.experimental_distribute_values_from_function(replica_slice)


def synchroniser(devices: tuple[str, ...]) -> Callable[[], None]:
    """What ends each timed call: `sync_devices()`, unless the process sees another worker's devices
    (it would try to sync them and fail); then a SyncDevice op per local replica device."""
    import tensorflow as tf

    if all(is_local_device(device.name) for device in tf.config.list_logical_devices()):
        return tf.test.experimental.sync_devices

    def sync_local():
        for device in devices:
            with tf.device(device):
                tf.raw_ops.SyncDevice()

    return sync_local


def output_checksum(outputs) -> str:
    """16 hex digits of SHA-256 over the float32 bytes of a gathered output: equal on every
    worker of one run, since each gathers the same tensor."""
    array = np.ascontiguousarray(np.asarray(outputs, dtype=np.float32))
    return hashlib.sha256(array.tobytes()).hexdigest()[:16]


# --- the record of a scaled run ------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class ScalingResult:
    """A run under a strategy next to one replica timed in the same rounds; apart from
    `BenchResult`, whose fields are the store's columns. Efficiency = t_one / t_all per round,
    median over rounds."""

    result: BenchResult  # every replica, the global batch; samples_per_s is the throughput
    one_replica: BenchResult | None  # one replica, per_replica_batch (None if never prepared)
    strategy: str
    replicas: int  # 0 when the run failed before the strategy was made
    per_replica_batch: int
    workers: int
    scaling_efficiency: float  # NaN when either run failed
    efficiency_p10: float
    efficiency_p90: float
    output_checksum: str  # of the gathered forward output, computed once before timing
    replica_devices: tuple[str, ...]  # this process's replica devices

    @property
    def status(self) -> str:
        return self.result.status

    @property
    def throughput(self) -> float:
        """Samples per second over every replica (global batch / median step time)."""
        return self.result.samples_per_s

    def to_dict(self) -> dict:
        row = self.result.to_dict()
        row.update(
            strategy=self.strategy,
            replicas=self.replicas,
            per_replica_batch=self.per_replica_batch,
            workers=self.workers,
            throughput=self.throughput,
            one_replica_throughput=(
                self.one_replica.samples_per_s if self.one_replica else math.nan
            ),
            scaling_efficiency=self.scaling_efficiency,
            efficiency_p10=self.efficiency_p10,
            efficiency_p90=self.efficiency_p90,
            output_checksum=self.output_checksum,
            replica_devices=list(self.replica_devices),
            one_replica=self.one_replica.to_dict() if self.one_replica else None,
        )
        return row
