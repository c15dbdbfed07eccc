"""SGD with (Nesterov) momentum and L2 weight decay for a trainer on the CPU, outside torch.optim.

Every torch.optim optimizer imports torch._dynamo on its first call (its methods are wrapped to
keep the compiler out): about 2.7 CPU-s at each start of `fastgo train`, as much again as
`import torch`. This class does what torch.optim.SGD does on CPU tensors, which is its
per-tensor loop (`_single_tensor_sgd`: torch uses its multi-tensor kernels on accelerators
only), operation for operation, so the weights after each step are the same bits. Its state
dict has torch.optim.SGD's layout: a checkpoint's optimizer state moves between this class and
torch.optim.SGD (a trainer on a GPU uses the latter) either way.

On a GPU trainer.training_core.make_optimizer keeps torch.optim.SGD, whose multi-tensor kernels
matter there and whose import cost does not.
"""
from __future__ import annotations

import math
from typing import Any

import torch

# torch.optim.SGD's group keys and defaults, as its state dict spells them
GROUP_DEFAULTS = {"lr": 1e-3, "momentum": 0.0, "dampening": 0.0, "weight_decay": 0.0,
                  "nesterov": False, "maximize": False, "foreach": None, "differentiable": False,
                  "fused": None}
MAX_STATE_PARAMS = 1 << 20        # entries a loaded state may name (a network has hundreds)


class PlainSGD:
    """torch.optim.SGD(params, lr, momentum, weight_decay=..., nesterov=...) for CPU tensors:
    one parameter group; `param_groups[0]["lr"]` is read at each step (schedules set it)."""

    def __init__(self, params, *, lr: float, momentum: float = 0.0, weight_decay: float = 0.0,
                 nesterov: bool = False):
        params = list(params)
        if not params:
            raise ValueError("optimizer got an empty parameter list")
        if lr < 0.0 or momentum < 0.0 or weight_decay < 0.0:
            raise ValueError(f"lr, momentum and weight_decay must be >= 0 (got {lr}, {momentum}, "
                             f"{weight_decay})")
        if nesterov and momentum <= 0:
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        group = dict(GROUP_DEFAULTS, lr=lr, momentum=momentum, weight_decay=weight_decay,
                     nesterov=bool(nesterov))
        group["params"] = params
        # heterogeneous values (floats, flags, the parameter list), typed as torch.optim types it
        self.param_groups: list[dict[str, Any]] = [group]
        self.state: dict = {}              # parameter -> {"momentum_buffer": tensor}

    def zero_grad(self, set_to_none: bool = True) -> None:
        for param in self.param_groups[0]["params"]:
            if param.grad is None:
                continue
            if set_to_none:
                param.grad = None
            else:
                param.grad.detach_()
                param.grad.zero_()

    @torch.no_grad()
    def step(self) -> None:
        """One step over the parameters that have a gradient: torch's `_single_tensor_sgd`."""
        group = self.param_groups[0]
        lr, momentum, dampening = group["lr"], group["momentum"], group["dampening"]
        weight_decay, nesterov, maximize = group["weight_decay"], group["nesterov"], group["maximize"]
        for param in group["params"]:
            if param.grad is None:
                continue
            grad = param.grad if not maximize else -param.grad
            if weight_decay != 0:
                grad = grad.add(param, alpha=weight_decay)
            if momentum != 0:
                state = self.state.setdefault(param, {})
                buf = state.get("momentum_buffer")
                if buf is None:
                    buf = state["momentum_buffer"] = grad.detach().clone()
                else:
                    buf.mul_(momentum).add_(grad, alpha=1 - dampening)
                grad = grad.add(buf, alpha=momentum) if nesterov else buf
            param.add_(grad, alpha=-lr)

    def state_dict(self) -> dict:
        """torch.optim.SGD's layout: parameters by index, buffers by reference (as torch's)."""
        group = self.param_groups[0]
        index = {id(p): i for i, p in enumerate(group["params"])}
        state = {index[id(p)]: dict(s) for p, s in self.state.items()}
        saved = {k: v for k, v in group.items() if k != "params"}
        saved["params"] = list(range(len(group["params"])))
        return {"state": state, "param_groups": [saved]}

    def load_state_dict(self, state_dict) -> None:
        """Loads a state dict of this class or of torch.optim.SGD (one group, the same number of
        parameters, each id once, finite buffers shaped like their parameters, cast to their
        dtype and device); ValueError naming what does not fit, with this optimizer unchanged."""
        if not isinstance(state_dict, dict) or not isinstance(state_dict.get("param_groups"), list) \
                or not isinstance(state_dict.get("state"), dict):
            raise ValueError("optimizer state is not a dict with 'state' and 'param_groups'")
        groups = state_dict["param_groups"]
        params = self.param_groups[0]["params"]
        if len(groups) != 1 or not isinstance(groups[0], dict) \
                or not isinstance(groups[0].get("params"), list) \
                or len(groups[0]["params"]) != len(params):
            raise ValueError(f"optimizer state does not fit: {len(groups)} parameter group(s), "
                             f"expected one of {len(params)} parameters")
        saved = groups[0]
        if len(state_dict["state"]) > MAX_STATE_PARAMS:
            raise ValueError(f"optimizer state names more than {MAX_STATE_PARAMS} parameters")
        position = {}
        for i, key in enumerate(saved["params"]):
            if isinstance(key, bool) or not isinstance(key, int):
                raise ValueError(f"optimizer state: parameter id {key!r} is not an integer")
            position[key] = i
        if len(position) != len(params):
            raise ValueError("optimizer state: a parameter id appears twice")
        new_state = {}
        for key, entry in state_dict["state"].items():
            if key not in position or not isinstance(entry, dict):
                raise ValueError(f"optimizer state: an entry for unknown parameter {key!r}")
            param = params[position[key]]
            buf = entry.get("momentum_buffer")
            if buf is None:
                continue
            if not isinstance(buf, torch.Tensor) or buf.shape != param.shape:
                raise ValueError(f"optimizer state: the momentum of parameter {key} is not a "
                                 f"tensor shaped {tuple(param.shape)}")
            if not bool(torch.isfinite(buf).all()):      # it would carry NaN into the weights
                raise ValueError(f"optimizer state: the momentum of parameter {key} is not finite")
            new_state[param] = {"momentum_buffer": buf.detach().to(dtype=param.dtype,
                                                                   device=param.device).clone()}
        group = self.param_groups[0]
        values = {}
        for name, default in GROUP_DEFAULTS.items():
            value = saved.get(name, default)
            if name in ("lr", "momentum", "dampening", "weight_decay"):
                if isinstance(value, bool) or not isinstance(value, (int, float)) \
                        or not 0 <= value < math.inf:
                    raise ValueError(f"optimizer state: {name} {value!r} is not a finite "
                                     f"number >= 0")
                value = float(value)
            elif name in ("nesterov", "maximize", "differentiable") and not isinstance(value, bool):
                raise ValueError(f"optimizer state: {name} {value!r} is not true or false")
            values[name] = value
        group.update(values)
        self.state = new_state
