"""What a Ray cluster must offer the roles (supervision.ray_placement), without Ray: actor options
from a resource table, a local instance with room for every role, one-line refusals."""
from types import SimpleNamespace

import pytest

from supervision.ray_placement import (
    RayUnavailable,
    actor_options,
    check_feasible,
    check_reachable,
    local_instance_options,
)


def test_actor_options_split_cpus_gpus_and_custom_resources():
    assert actor_options({"CPU": 2, "GPU": 1, "trainer_node": 1}) == \
        {"num_cpus": 2.0, "num_gpus": 1.0, "resources": {"trainer_node": 1.0}}
    assert actor_options({}) == {"num_cpus": 0.0, "num_gpus": 0.0, "resources": {}}


def test_a_local_instance_has_room_for_every_role():
    options = local_instance_options([{"CPU": 1000}, {"CPU": 1, "big": 2}, {"big": 1}])
    # the CPUs the roles ask for together, rounded up; custom resources summed
    assert options["num_cpus"] == 1001 and options["resources"] == {"big": 3}


def test_a_role_no_node_can_take_is_refused_in_one_line():
    nodes = [{"Resources": {"CPU": 4.0, "node:1.2.3.4": 1.0}}]
    check_feasible([SimpleNamespace(kind="selfplay", resources={"CPU": 1})], nodes)
    with pytest.raises(RayUnavailable, match=r"cluster\.server_resources .* \(CPU 4\)"):
        check_feasible([SimpleNamespace(kind="serve", resources={"GPU": 1})], nodes)


def test_an_address_is_host_and_port():
    check_reachable("auto")
    with pytest.raises(RayUnavailable, match="expected HOST:PORT"):
        check_reachable("nowhere")
