"""One variant on several devices and machines with `tf.distribute`: the plan of a mirrored or
multi-worker run and its replicated forward (`distribute`), and where the replicas are: logical
CPUs, the cluster from TF_CONFIG, this process's devices (`cluster`)."""

from hierlstm._lazy import lazy_exports

EXPORTS = {
    "Plan": "distribute",
    "ReplicatedForward": "distribute",
    "ScalingResult": "distribute",
    "distribute_inputs": "distribute",
    "make_strategy": "distribute",
    "multi_worker_strategy": "distribute",
    "plan": "distribute",
    "planned_replicas": "distribute",
    "ensure_logical_cpus": "cluster",
    "ensure_logical_cpus_from_environment": "cluster",
    "local_devices": "cluster",
    "parse_cluster": "cluster",
    "replica_device_specs": "cluster",
    "require_trusted_network": "cluster",
    "set_cluster": "cluster",
    "short_name": "cluster",
}
__getattr__, __dir__ = lazy_exports(__name__, EXPORTS)
