"""trainer.sgd.PlainSGD against torch.optim.SGD on the CPU: the same weights to the bit after
every step (Nesterov momentum, weight decay, parameters without a gradient, an lr changed between
steps, zero_grad), state dicts that load into each other either way, a trainer process that
never imports torch._dynamo, and hostile optimizer states refused with ValueError, the optimizer
unchanged."""
import copy
import functools
import re
import subprocess
import sys

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from network.model import build_model
from rundata.config import ModelConfig
from trainer.sgd import GROUP_DEFAULTS, PlainSGD


def net(seed=0):
    return build_model(ModelConfig(board_size=5, blocks=1, channels=8), seed=seed)


def backward(model, seed):
    """Gradients of a seeded loss; the value head left without gradient every third step."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(4, model.config.planes, 5, 5, generator=g)
    policy, value = model(x)[:2]
    loss = (policy * torch.randn(policy.shape, generator=g)).sum()
    if seed % 3:
        loss = loss + (value * torch.randn(value.shape, generator=g)).sum()
    loss.backward()


def same_weights(a, b):
    return all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters()))


@pytest.mark.parametrize("momentum,weight_decay", [(0.9, 1e-4), (0.0, 0.0), (0.5, 0.0)])
def test_the_same_bits_as_torch_sgd(momentum, weight_decay):
    ours, theirs = net(), net()
    assert same_weights(ours, theirs)
    kwargs = dict(lr=0.05, momentum=momentum, weight_decay=weight_decay, nesterov=momentum > 0)
    opt_a, opt_b = PlainSGD(ours.parameters(), **kwargs), torch.optim.SGD(theirs.parameters(), **kwargs)
    for step in range(8):
        for model, opt in ((ours, opt_a), (theirs, opt_b)):
            opt.zero_grad(set_to_none=True)
            backward(model, step)
            if step == 4:
                opt.param_groups[0]["lr"] = 0.01          # a schedule's new lr
            opt.step()
        assert same_weights(ours, theirs), step
    assert not same_weights(ours, net())                 # it did train


def test_state_dicts_move_between_the_two_either_way():
    kwargs = dict(lr=0.05, momentum=0.9, weight_decay=1e-4, nesterov=True)
    models = {"plain": net(), "torch": net()}
    opts = {"plain": PlainSGD(models["plain"].parameters(), **kwargs),
            "torch": torch.optim.SGD(models["torch"].parameters(), **kwargs)}
    for step in range(3):
        for name in models:
            opts[name].zero_grad()
            backward(models[name], step)
            opts[name].step()
    assert opts["plain"].state_dict()["param_groups"] == opts["torch"].state_dict()["param_groups"]
    # each state loaded into the other class continues as the original does
    for source, target in (("plain", "torch"), ("torch", "plain")):
        model = copy.deepcopy(models[source])
        cls = torch.optim.SGD if target == "torch" else PlainSGD
        other = cls(model.parameters(), lr=1.0, momentum=0.9, nesterov=True)
        other.load_state_dict(copy.deepcopy(opts[source].state_dict()))
        original = copy.deepcopy(models[source])
        again = cls(original.parameters(), lr=1.0, momentum=0.9, nesterov=True)
        again.load_state_dict(copy.deepcopy(opts[source].state_dict()))
        for step in range(3, 6):
            for m, o in ((model, other), (original, again)):
                o.zero_grad()
                backward(m, step)
                o.step()
        assert same_weights(model, original), (source, target)
        assert other.param_groups[0]["lr"] == 0.05


def state_of_a_step():
    model = net()
    opt = PlainSGD(model.parameters(), lr=0.1, momentum=0.9, nesterov=True)
    backward(model, 1)
    opt.step()
    return model, opt, opt.state_dict()


def group(**changes):
    return lambda sd: {**sd, "param_groups": [{**sd["param_groups"][0], **changes}]}


def state(key, buffer):
    return lambda sd: {**sd, "state": {**sd["state"], key: {"momentum_buffer": buffer}}}


HOSTILE = {      # the change, and what the refusal says
    "not a dict": (lambda sd: ["state"], "not a dict"),
    "no groups": (lambda sd: {**sd, "param_groups": None}, "not a dict"),
    "two groups": (lambda sd: {**sd, "param_groups": sd["param_groups"] * 2}, "does not fit"),
    "fewer params": (group(params=[0]), "does not fit"),
    "a string id": (lambda sd: group(params=["0"] + sd["param_groups"][0]["params"][1:])(sd),
                    "is not an integer"),
    "an id twice": (lambda sd: group(params=[0, 0] + sd["param_groups"][0]["params"][2:])(sd),
                    "appears twice"),
    "an unknown id": (state(10 ** 9, torch.zeros(1)), "unknown parameter"),
    "a misshapen buffer": (state(0, torch.zeros(7)), "is not a tensor shaped"),
    "a buffer that is a list": (state(0, [0.0]), "is not a tensor shaped"),
    "a NaN buffer": (lambda sd: state(0, torch.full_like(sd["state"][0]["momentum_buffer"],
                                                         float("nan")))(sd), "not finite"),
    "a negative lr": (group(lr=-1.0), "lr -1.0"),
    "lr NaN": (group(lr=float("nan")), "lr nan"),
    "lr infinite": (group(lr=float("inf")), "lr inf"),
    "lr a string": (group(lr="0.1"), "lr '0.1'"),
    "nesterov a string": (group(nesterov="yes"), "nesterov 'yes'"),
}


@pytest.mark.parametrize("case", HOSTILE, ids=HOSTILE)
def test_a_hostile_state_is_refused_and_changes_nothing(case):
    model, opt, good = state_of_a_step()
    change, says = HOSTILE[case]
    assert change(good) is not good
    before = {p: s["momentum_buffer"].clone() for p, s in opt.state.items()}
    with pytest.raises(ValueError, match=re.escape(says)):
        opt.load_state_dict(change(good))
    assert opt.param_groups[0]["lr"] == 0.1 and opt.param_groups[0]["nesterov"] is True
    assert set(opt.state) == set(before)
    assert all(torch.equal(opt.state[p]["momentum_buffer"], b) for p, b in before.items())
    opt.load_state_dict(good)                    # the state it was made from still loads


def test_a_cpu_trainer_never_imports_torch_dynamo(tmp_path, write_tiny_config):
    """make_optimizer on the CPU, steps, a state dict saved and loaded: no torch._dynamo (which
    torch.optim imports at its first call)."""
    config = write_tiny_config(tmp_path / "c.toml")
    code = ("import sys, torch\n"
            "from rundata.config import load_config\n"
            "from network.model import build_model\n"
            "from trainer.training_core import make_optimizer\n"
            f"config = load_config({config!r})\n"
            "model = build_model(config.model, seed=0)\n"
            "opt = make_optimizer(model, config.trainer)\n"
            "x = torch.randn(2, config.model.planes, 5, 5)\n"
            "for _ in range(2):\n"
            "    opt.zero_grad(); model(x)[0].sum().backward(); opt.step()\n"
            "opt.load_state_dict(opt.state_dict())\n"
            "print(type(opt).__name__, 'torch._dynamo' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["PlainSGD", "False"], out.stdout


@functools.lru_cache(maxsize=1)
def _a_state():
    """(model, the state dict of one step) made once for the fuzz test's examples."""
    model, _, good = state_of_a_step()
    return model, good


VALUES = st.one_of(st.none(), st.booleans(), st.integers(-3, 10 ** 20), st.text(max_size=5),
                   st.floats(allow_nan=True, allow_infinity=True), st.lists(st.integers(0, 3), max_size=3),
                   st.just(torch.zeros(1)), st.just(torch.full((2,), float("nan"))))


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(where=st.sampled_from(["group", "state", "entry", "top"]), key=st.one_of(
    st.sampled_from(list(GROUP_DEFAULTS) + ["params", "momentum_buffer", "state", "param_groups"]),
    st.integers(-2, 5), st.text(max_size=3)), value=VALUES)
def test_fuzz_one_value_of_a_state_is_loaded_or_refused_with_value_error(where, key, value):
    """One value of a valid state replaced anywhere: loads, or ValueError with the optimizer
    unchanged; never another exception."""
    model, good = _a_state()
    opt = PlainSGD(model.parameters(), lr=0.1, momentum=0.9, nesterov=True)
    opt.load_state_dict(good)
    bad = copy.deepcopy(good)
    target = {"group": bad["param_groups"][0], "state": bad["state"],
              "entry": bad["state"][0], "top": bad}[where]
    target[key] = value
    before = {p: s["momentum_buffer"].clone() for p, s in opt.state.items()}
    try:
        opt.load_state_dict(bad)
    except ValueError:
        assert opt.param_groups[0]["lr"] == 0.1
        assert all(torch.equal(opt.state[p]["momentum_buffer"], b) for p, b in before.items())
