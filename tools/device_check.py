"""The GPU check: on a machine with a CUDA GPU, from a fresh checkout, in under 8 minutes:

    python3 tools/device_check.py [--json FILE] [--budget-s 480]

builds the Cython kernels in place, runs the CUDA tests, `fastgo bench server` and `fastgo bench
selfplay` on configs/9x9_gpu.toml and configs/19x19_gpu.toml, `fastgo bench train` and a short
learning run (`fastgo cluster --config configs/9x9_gpu.toml --duration 60s`), each step under its
own time limit, and prints one table: step, figure, its ceiling from the same run, their ratio,
seconds, status. A step that fails or runs out of time is a row with its reason; the others
still run. Without a CUDA device it says so in one line and exits 2 before anything long. No
network access is needed: the project's runtime dependencies must already be installed (the
check names any that are missing). Cython, a build requirement, is needed only to build the
kernels: where it is absent and the kernels are already built (`pip install -e .` builds them),
they are used as they are.
"""
from __future__ import annotations

import argparse
import glob
import importlib.machinery
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)                   # the checkout's packages, installed or not
from fastgo import bounded_json  # noqa: E402  (needs ROOT on the path)

MODULES = ("torch", "numpy", "zmq", "msgpack", "pytest")     # what the steps run with
BUILD_MODULE = "Cython"                                      # what building the kernels needs
MAX_JSON_BYTES = 1 << 20                                     # a step's JSON output, at most
BUDGET_S = 480.0
CLUSTER_S = 60


@dataclass
class Step:
    """One check: `argv` run from the repository root within `limit_s`; `read(json_dict)` ->
    (figure, ceiling or None, unit) from the JSON the command wrote to the path given as
    {json} in argv (None: the exit status alone, the figure is the pass count line)."""
    name: str
    argv: list
    limit_s: float
    read: object = None
    detail_from: str = ""      # the row's detail: the last output line holding this (else the last)


@dataclass
class Row:
    name: str
    figure: float | None = None
    ceiling: float | None = None
    unit: str = ""
    seconds: float = 0.0
    status: str = "ok"
    detail: str = ""
    extra: dict = field(default_factory=dict)

    @property
    def ratio(self):
        if self.figure is None or not self.ceiling:
            return None
        return self.figure / self.ceiling


def _tail(text, limit=160):
    lines = [line.strip() for line in (text or "").splitlines() if line.strip()]
    return (lines[-1] if lines else "")[:limit]


def run_step(step: Step, *, cwd=ROOT, env=None, clock=time.monotonic) -> Row:
    """Runs one step; a non-zero exit, a time-out or unreadable JSON is a row with its reason."""
    row = Row(step.name)
    with tempfile.TemporaryDirectory() as scratch:
        out_json = os.path.join(scratch, "out.json")
        argv = [a.replace("{json}", out_json).replace("{tmp}", scratch) for a in step.argv]
        began = clock()
        try:
            done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True,
                                  timeout=step.limit_s)
        except subprocess.TimeoutExpired:
            row.seconds, row.status = clock() - began, "timeout"
            row.detail = f"over its {step.limit_s:g} s"
            return row
        except OSError as err:
            row.seconds, row.status, row.detail = clock() - began, "failed", str(err)
            return row
        row.seconds = clock() - began
        if done.returncode != 0:
            row.status = "failed"
            row.detail = f"exit {done.returncode}: {_tail(done.stderr) or _tail(done.stdout)}"
            return row
        if step.read is None:
            picked = [line for line in done.stdout.splitlines()
                      if step.detail_from and step.detail_from in line]
            row.detail = _tail(picked[-1] if picked else done.stdout)
            return row
        try:
            with open(out_json, "rb") as handle:
                data = bounded_json.loads(handle.read(MAX_JSON_BYTES + 1),
                                          max_size=MAX_JSON_BYTES)
            row.figure, row.ceiling, row.unit = step.read(data)
        except (OSError, ValueError, KeyError, TypeError, IndexError) as err:
            row.status, row.detail = "failed", f"no figure in its JSON: {err}"
    return row


def format_table(rows, device="") -> str:
    """The one table the check prints."""
    lines = [f"fastgo GPU check{': ' + device if device else ''}",
             f"{'step':<28} {'figure':>14} {'ceiling':>14} {'ratio':>7} {'seconds':>8}  status",
             "-" * 90]
    for row in rows:
        figure = "" if row.figure is None else f"{row.figure:,.0f} {row.unit}".strip()
        ceiling = "" if row.ceiling is None else f"{row.ceiling:,.0f}"
        ratio = "" if row.ratio is None else f"{row.ratio:.3f}"
        status = row.status + (f" ({row.detail})" if row.detail else "")
        lines.append(f"{row.name:<28} {figure:>14} {ceiling:>14} {ratio:>7} "
                     f"{row.seconds:>8.1f}  {status}")
    total = sum(row.seconds for row in rows)
    bad = sum(row.status != "ok" for row in rows)
    lines.append("-" * 90)
    lines.append(f"{len(rows)} steps, {bad} not ok, {total:.0f} s in all")
    return "\n".join(lines)


def _server(data):
    data = data[0] if isinstance(data, list) else data
    return data["server_evals_per_s"], data["raw_evals_per_s"], "evals/s"


def _selfplay(data):
    return data["evals_per_s"], data["raw_evals_per_s"], "evals/s"


def _train(data):
    return data["train_samples_per_s"], data["data_positions_per_s"], "samples/s"


def steps(python=sys.executable) -> list:
    """The checks, in order, with limits that add up to under BUDGET_S."""
    fastgo = [python, "-m", "fastgo_cli.main"]
    out = [Step("build kernels", [python, "setup.py", "build_ext", "--inplace", "--parallel",
                                  str(os.cpu_count() or 1)], 90),
           # the project's addopts name pytest-xdist options a GPU image's plugins may lack
           Step("CUDA tests", [python, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                               "-o", "addopts=-ra", "tests/system/serve/test_cuda.py"], 90)]
    for config in ("9x9_gpu", "19x19_gpu"):
        out.append(Step(f"bench server {config}",
                        fastgo + ["bench", "server", "--config", config, "--device", "cuda",
                                  "--seconds", "2", "--rounds", "2", "--json", "{json}"],
                        30, _server))
        out.append(Step(f"bench selfplay {config}",
                        fastgo + ["bench", "selfplay", "--config", config, "--seconds", "4",
                                  "--warmup", "4", "--rounds", "1", "--json", "{json}"],
                        35, _selfplay))
    out.append(Step("bench train 9x9_gpu",
                    fastgo + ["bench", "train", "--config", "9x9_gpu", "--games", "100",
                              "--seconds", "2", "--repeats", "1", "--no-compile",
                              "--json", "{json}"], 45, _train))
    out.append(Step("learning run 9x9_gpu",
                    fastgo + ["cluster", "--config", "9x9_gpu", "--duration", f"{CLUSTER_S}s",
                              "--run-dir", "{tmp}/run",
                              # the final rating would outlast the step's limit
                              "--set", "evaluator.final_rating_s=0"], CLUSTER_S + 40,
                    detail_from="self-play games"))
    return out


def missing_modules(names=MODULES) -> list:
    return [name for name in names if importlib.util.find_spec(name) is None]


def kernels_built(root=ROOT) -> bool:
    """True when every kernel (fastgo/NAME.pyx) has a compiled module beside it."""
    suffixes = importlib.machinery.EXTENSION_SUFFIXES
    kernels = [p[:-len(".pyx")] for p in glob.glob(os.path.join(root, "fastgo", "*.pyx"))]
    return bool(kernels) and all(any(os.path.exists(k + s) for s in suffixes) for k in kernels)


def cuda_device() -> str | None:
    """The CUDA device's name, or None where torch sees none."""
    try:
        import torch
    except ImportError:
        return None
    if not torch.cuda.is_available():
        return None
    return torch.cuda.get_device_name(0)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="device_check", description=__doc__.split("\n")[0])
    parser.add_argument("--json", default=None, help="also write the rows as JSON to FILE")
    parser.add_argument("--budget-s", type=float, default=BUDGET_S,
                        help="stop starting steps once this much time has passed")
    args = parser.parse_args(argv)
    missing = missing_modules()
    if missing:
        print(f"device_check: missing Python modules: {', '.join(missing)} (install the "
              "project's dependencies first)", file=sys.stderr)
        return 2
    device = cuda_device()
    if device is None:
        print("device_check: no CUDA device (torch.cuda.is_available() is false): nothing to "
              "check here", file=sys.stderr)
        return 2
    plan, rows = steps(), []
    if missing_modules((BUILD_MODULE,)):
        if not kernels_built():
            print(f"device_check: missing Python module: {BUILD_MODULE} (the kernels are not "
                  "built, and building them needs it)", file=sys.stderr)
            return 2
        plan = [step for step in plan if step.name != "build kernels"]
        rows.append(Row("build kernels", detail=f"already built; no {BUILD_MODULE} to rebuild"))
    began = time.monotonic()
    for step in plan:
        left = args.budget_s - (time.monotonic() - began)
        if left < 10:
            rows.append(Row(step.name, status="skipped", detail="the check's time is spent"))
            continue
        step.limit_s = min(step.limit_s, left)
        row = run_step(step)
        rows.append(row)
        print(f"  {row.name}: {row.status} in {row.seconds:.0f} s", flush=True)
        if step.name == "build kernels" and row.status != "ok":
            break                      # nothing else runs without the kernels
    print(format_table(rows, device))
    if args.json:
        with open(args.json, "w") as handle:
            json.dump({"device": device, "rows": [dict(vars(r), ratio=r.ratio) for r in rows]},
                      handle, indent=1)
    return 0 if all(r.status == "ok" for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
