"""The config package needs no compiled kernel: a process where every compiled extension module
of fastgo is refused (as on a checkout whose kernels are not built) imports rundata.config
and reads the shipped quickstart config, its variants held as fastgo.variants members."""
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]

CHILD = textwrap.dedent("""
    import importlib.abc
    import importlib.machinery
    import sys


    class NoKernels(importlib.abc.MetaPathFinder):
        # refuses a fastgo.* module that would load from a compiled extension (.so)
        refused = []

        def find_spec(self, name, path, target=None):
            if not name.startswith("fastgo."):
                return None
            spec = importlib.machinery.PathFinder.find_spec(name, path, target)
            if spec is not None and isinstance(spec.loader,
                                               importlib.machinery.ExtensionFileLoader):
                self.refused.append(name)
                raise ModuleNotFoundError(f"no compiled kernels here: {name}", name=name)
            return None


    sys.meta_path.insert(0, NoKernels())
    try:
        import fastgo.board  # noqa: F401  (the finder must refuse a kernel)
    except ModuleNotFoundError:
        pass
    else:
        raise SystemExit("fastgo.board was imported: the finder refuses nothing")

    from rundata.config import load_config
    from fastgo.variants import Backend, Device, PassRule, Search

    config = load_config(sys.argv[1])
    assert isinstance(config.selfplay.pass_rule, PassRule), config.selfplay.pass_rule
    assert isinstance(config.selfplay.policy_pass_rule, PassRule)
    assert isinstance(config.selfplay.search, Search)
    assert isinstance(config.server.backend, Backend)
    assert isinstance(config.server.device, Device) and isinstance(config.trainer.device, Device)
    loaded = sorted(name for name, module in list(sys.modules.items())
                    if name.startswith("fastgo") and isinstance(
                        getattr(getattr(module, "__spec__", None), "loader", None),
                        importlib.machinery.ExtensionFileLoader))
    assert not loaded, loaded
    print("refused", ",".join(NoKernels.refused))
    print("model", config.model.name)
""")


def test_the_config_loads_the_quickstart_without_the_compiled_kernels():
    done = subprocess.run([sys.executable, "-c", CHILD, str(ROOT / "configs" / "quickstart.toml")],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = dict(line.split(" ", 1) for line in done.stdout.splitlines())
    # the finder refused fastgo.board and nothing the config imports
    assert lines["refused"] == "fastgo.board", done.stdout
    assert lines["model"].startswith("b"), done.stdout
