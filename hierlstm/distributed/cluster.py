"""Where a distributed run's replicas are: this machine's logical CPU devices, the multi-worker
cluster (TF_CONFIG) and which listed devices are this process's. TensorFlow is imported inside the
functions."""

from __future__ import annotations

import ipaddress
import json
import os
import re

from hierlstm import settings
from hierlstm.config import RunConfig, SettingError

LOGICAL_CPUS_ENV = "HIERLSTM_LOGICAL_CPUS"  # read by `ensure_logical_cpus_from_environment`
MAX_LOGICAL_CPUS = 64
_ADDRESS_PATTERN = re.compile(r"^[A-Za-z0-9.\-]+:\d{1,5}$|^\[[0-9A-Fa-f:]+\]:\d{1,5}$")


# --- logical CPU devices ---------------------------------------------------------------------


def ensure_logical_cpus(count: int) -> int:
    """Splits the first CPU into `count` logical devices, /CPU:0 .. /CPU:count-1: enough to test
    every strategy without a GPU, never a measure of GPU scaling. TensorFlow fixes its devices when
    its runtime starts, so call this first; afterwards it returns an existing count of at least
    `count`, else raises RuntimeError saying how to start the process."""
    import tensorflow as tf

    if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= MAX_LOGICAL_CPUS:
        raise SettingError(
            f"logical CPU count must be a whole number from 1 to {MAX_LOGICAL_CPUS}; got {count!r}."
        )
    cpu = tf.config.list_physical_devices("CPU")[0]
    try:
        tf.config.set_logical_device_configuration(
            cpu, [tf.config.LogicalDeviceConfiguration() for _ in range(count)]
        )
        return count
    except RuntimeError:  # the runtime has started: its devices are fixed
        existing = len(tf.config.list_logical_devices("CPU"))
        if existing >= count:
            return existing
        raise RuntimeError(
            f"cannot make {count} logical CPU devices: TensorFlow already started with "
            f"{existing}; set them before anything runs (CLI: --logical-cpus {count}; app: "
            f"{LOGICAL_CPUS_ENV}={count})."
        ) from None


def ensure_logical_cpus_from_environment() -> int | None:
    """`ensure_logical_cpus($HIERLSTM_LOGICAL_CPUS)` when that is set (for the app's start-up)."""
    count = settings.read(LOGICAL_CPUS_ENV)
    return None if count is None else ensure_logical_cpus(count)


# --- the cluster of a multi-worker run -------------------------------------------------------


def parse_cluster(text: str) -> tuple[str, ...]:
    """ "host1:port,host2:port" -> ("host1:port", "host2:port"); ValueError in one sentence."""
    addresses = tuple(part.strip() for part in str(text).split(",") if part.strip())
    bad = [
        address
        for address in addresses
        if not _ADDRESS_PATTERN.match(address) or not 1 <= int(address.rsplit(":", 1)[1]) <= 65535
    ]
    if not addresses or bad:
        raise SettingError(
            "--cluster must be comma-separated HOST:PORT, one per worker, the same list on every "
            f"worker (e.g. 10.0.0.1:12345,10.0.0.2:12345); got {text!r}."
        )
    if len(set(addresses)) != len(addresses):
        raise SettingError(f"--cluster must name each worker once; got {text!r}.")
    return addresses


def set_cluster(addresses: tuple[str, ...], task_index: int) -> dict:
    """Writes TF_CONFIG for worker `task_index` of `addresses` (before the strategy is made)."""
    if not 0 <= task_index < len(addresses):
        raise SettingError(
            f"--task-index must be from 0 to {len(addresses) - 1} for {len(addresses)} workers; "
            f"got {task_index}."
        )
    tf_config = {
        "cluster": {"worker": list(addresses)},
        "task": {"type": "worker", "index": task_index},
    }
    os.environ["TF_CONFIG"] = json.dumps(tf_config)
    return tf_config


def cluster_from_environment() -> tuple[tuple[str, ...], str, int] | None:
    """(every member's address, this task's type, its index) from TF_CONFIG; None if unset."""
    text = os.environ.get("TF_CONFIG", "").strip()
    if not text:
        return None
    try:
        tf_config = json.loads(text)
        cluster = tf_config["cluster"]
        members = tuple(cluster.get("chief", [])) + tuple(cluster["worker"])
        task_type, task_index = str(tf_config["task"]["type"]), int(tf_config["task"]["index"])
    except (ValueError, KeyError, TypeError):
        raise SettingError(
            'TF_CONFIG must be JSON like {"cluster": {"worker": ["host:port", ...]}, "task": '
            f'{{"type": "worker", "index": 0}}}}; got {text[:80]!r}.'
        ) from None
    return members, task_type, task_index


def is_loopback(address: str) -> bool:
    """Whether "HOST:PORT" names this machine by a loopback address ("localhost", 127.0.0.0/8,
    [::1]). A host name is not resolved: any other name counts as the network."""
    host = address.rsplit(":", 1)[0].strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def require_trusted_network(trusted_network: bool) -> None:
    """SettingError when TF_CONFIG's cluster names an address off this machine and the user did
    not say the network is trusted. TensorFlow's gRPC workers have no authentication (the
    server's credentials are `InsecureServerCredentials`): whoever reaches a worker's port can
    run graphs on it."""
    cluster = cluster_from_environment()
    outside = [address for address in (cluster or ((),))[0] if not is_loopback(address)]
    if outside and not trusted_network:
        raise SettingError(
            f"worker address {outside[0]} is off this machine, and TensorFlow's workers have no "
            "authentication: anyone who reaches the port can run code there; add "
            "--trusted-network if every machine on that network is yours."
        )


def require_cluster(config: RunConfig) -> tuple[tuple[str, ...], str, int]:
    """`cluster_from_environment()`, or ValueError saying how to describe the cluster."""
    cluster = cluster_from_environment()
    if cluster is None:
        raise SettingError(
            f"strategy {config.strategy} needs a cluster: set TF_CONFIG, or start each machine "
            "with `python -m hierlstm worker --cluster HOST:PORT,... --task-index I`."
        )
    return cluster


# --- this process's devices ------------------------------------------------------------------


def is_local_device(name: str) -> bool:
    """Whether a logical device belongs to this process (a cluster lists every worker's)."""
    import tensorflow as tf

    spec = tf.DeviceSpec.from_string(name)
    if spec.job in (None, "localhost"):
        return True
    cluster = cluster_from_environment()
    return cluster is not None and (spec.job, spec.task) == (cluster[1], cluster[2])


def local_devices(kind: str) -> list[str]:
    """Full names of this process's logical devices of `kind` ("CPU" or "GPU"), by index."""
    import tensorflow as tf

    devices = tf.config.list_logical_devices(kind)
    names = [device.name for device in devices if is_local_device(device.name)]
    return sorted(names, key=lambda name: tf.DeviceSpec.from_string(name).device_index)


def short_name(name: str) -> str:
    """ "/job:worker/replica:0/task:1/device:CPU:0" -> "/CPU:0"."""
    import tensorflow as tf

    spec = tf.DeviceSpec.from_string(name)
    return f"/{spec.device_type}:{spec.device_index}"


def replica_device_specs(config: RunConfig) -> tuple[str, ...]:
    """The mirrored replicas as specs ("gpu:0", ...): `config.devices` if named, else every
    local GPU, else every logical CPU device."""
    if config.device_list:
        return config.device_list
    for kind in ("GPU", "CPU"):
        names = local_devices(kind)
        if names:
            return tuple(f"{kind.lower()}:{index}" for index in range(len(names)))
    return ("cpu:0",)
