"""What a Ray cluster must offer the roles of a run (supervision.ray_launcher): each role's actor
options from its resource table, a Ray instance on this machine with room for every role, the
check that some node can take each role, and the check that a head's address answers at all.
Never imports ray: the nodes come in as ray.nodes() describes them (dicts with "Resources").
"""
from __future__ import annotations

import os
import socket

from roles.registry import RESOURCES_KEY

LOCAL_OBJECT_STORE_BYTES = 100 << 20     # a Ray instance of this machine: the roles pass no objects


class RayUnavailable(RuntimeError):
    """Ray is not installed, cannot be reached, or cannot place a role: one line for the user."""


def actor_options(resources):
    """Ray actor options for a resource table {CPU: n, GPU: n, custom: n}."""
    table = dict(resources)
    return {"num_cpus": float(table.pop("CPU", 0.0)), "num_gpus": float(table.pop("GPU", 0.0)),
            "resources": {name: float(amount) for name, amount in table.items()}}


def check_reachable(address, timeout_s=5.0):
    """RayUnavailable unless HOST:PORT accepts a TCP connection (ray.init would retry an
    unreachable address for minutes); auto and ray:// addresses are left to Ray."""
    if address == "auto" or "://" in address:
        return
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit() or not 1 <= int(port) <= 65535:
        raise RayUnavailable(f"--address {address[:80]!r}: expected HOST:PORT (the head's GCS port, "
                             f"6379 by default) or auto")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=timeout_s).close()
    except OSError as err:
        raise RayUnavailable(f"--address {address}: no Ray cluster there ({err.strerror or err}); "
                             f"start one with `ray start --head`") from None


def local_instance_options(resource_tables):
    """ray.init options of a Ray instance for this machine only: room for every role (the roles
    oversubscribe the CPUs as the local launcher's processes do), and the custom resources the
    roles' resource tables name."""
    demand = {}
    for table in resource_tables:
        for name, amount in table.items():
            demand[name] = demand.get(name, 0.0) + amount
    custom = {name: amount for name, amount in demand.items() if name not in ("CPU", "GPU")}
    return {"num_cpus": max(os.cpu_count() or 1, int(demand.get("CPU", 0.0) + 0.999)),
            "resources": custom, "include_dashboard": False, "log_to_driver": False,
            "logging_level": "WARNING", "object_store_memory": LOCAL_OBJECT_STORE_BYTES}


def check_feasible(children, nodes):
    """RayUnavailable naming the config key and what the nodes offer, unless every role of
    `children` (each with .kind and .resources) fits on one of the live `nodes`."""
    for child in children:
        if not any(all(node.get("Resources", {}).get(name, 0.0) >= amount
                       for name, amount in child.resources.items() if amount > 0)
                   for node in nodes):
            key = RESOURCES_KEY[child.kind]
            offers = "; ".join(", ".join(f"{k} {v:g}" for k, v in sorted(n.get("Resources", {}).items())
                                         if not k.startswith(("node:", "memory", "object_store")))
                               for n in nodes)
            raise RayUnavailable(f"cluster.{key} = {child.resources}: no node of the Ray cluster "
                                 f"has that ({offers or 'no nodes'})")
