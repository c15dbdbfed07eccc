"""The variants (fastgo.variants): each defined once as a str-valued Enum, the config validating
against them, the command line's choices and the kernel's tables derived from them, one map from
an algorithm to its self-play worker that every caller asks, the role registry re-exporting them,
and no product module comparing against a variant's bare string."""
import ast
from pathlib import Path

import pytest

from fastgo.variants import (
    BACKEND_ALIASES,
    CUDA_BACKENDS,
    INFERENCE_BACKENDS,
    Algorithm,
    Backend,
    Device,
    PassRule,
    Search,
    Use,
    Worker,
    selfplay_worker,
)
from rundata.config import ConfigError, loads_config

ROOT = Path(__file__).resolve().parents[3]
PACKAGES = ("fastgo", "rundata", "network", "wire", "inference_server", "recorder", "selfplay_workers",
            "play", "trainer", "evaluation", "roles", "supervision", "dashboard", "comparison",
            "fastgo_cli")
SEARCH_NAMES = {search.value for search in Search}
ALGORITHM_NAMES = {algorithm.value for algorithm in Algorithm}


def test_a_variant_is_its_own_string():
    assert [a.value for a in Algorithm] == ["alphazero", "reinforce", "value"]
    assert [s.value for s in Search] == ["puct", "gumbel"]
    assert Search.GUMBEL == "gumbel" and f"{Algorithm.VALUE}" == "value"
    # the words configs, command lines and files used before they were Enums
    assert PassRule.choices() == ("free", "fill", "settled", "decided")
    assert Backend.choices() == ("auto", "torch", "onnx", "torch-fp32", "torch-bf16", "onnx-fp32",
                                 "onnx-int8", "openvino-f32", "openvino-bf16", "openvino-int8")
    assert INFERENCE_BACKENDS == Backend.choices()[3:]
    assert BACKEND_ALIASES == {"torch": "torch-fp32", "onnx": "onnx-fp32"}
    assert set(CUDA_BACKENDS) == {"auto", "torch", "torch-fp32"}
    assert Device.choices() == ("auto", "cpu", "cuda")
    assert Use.choices() == ("match", "play", "gtp", "analysis")
    assert {"cuda": 1}[Device.CUDA] == 1 and str(Backend.ONNX_INT8) == "onnx-int8"


def test_the_config_holds_members_of_every_variant_it_names():
    config = loads_config('[selfplay]\npass_rule = "decided"\npolicy_pass_rule = "free"\n'
                          '[server]\nbackend = "onnx-int8"\ndevice = "cpu"\n'
                          '[trainer]\ndevice = "cuda"\n')
    assert config.selfplay.pass_rule is PassRule.DECIDED
    assert config.selfplay.policy_pass_rule is PassRule.FREE
    assert config.server.backend is Backend.ONNX_INT8 and config.server.device is Device.CPU
    assert config.trainer.device is Device.CUDA
    defaults = loads_config("")
    assert (defaults.selfplay.pass_rule, defaults.selfplay.policy_pass_rule) == ("free", "fill")
    assert (defaults.server.backend, defaults.server.device) == ("torch", "auto")
    with pytest.raises(ConfigError, match=r"selfplay.pass_rule: must be one of \['free', 'fill', "
                                          r"'settled', 'decided'\], got 'filled'"):
        loads_config('[selfplay]\npass_rule = "filled"\n')
    with pytest.raises(ConfigError, match=r"server.device: must be one of \['auto', 'cpu', "
                                          r"'cuda'\], got 'gpu'"):
        loads_config('[server]\ndevice = "gpu"\n')
    with pytest.raises(ConfigError, match=r"server.backend: must be one of \['auto', 'torch', "):
        loads_config('[server]\nbackend = "tensorrt"\n')
    with pytest.raises(ConfigError, match=r"backend: 'onnx-int8' runs on the CPU; use device"):
        loads_config('[server]\nbackend = "onnx-int8"\ndevice = "cuda"\n')
    from rundata.config import to_dict

    written = to_dict(config)
    assert written["selfplay"]["pass_rule"] == "decided" and \
        type(written["server"]["backend"]) is str


def test_the_kernels_tables_cover_every_member():
    from fastgo import mcts
    from fastgo.move_choice import policy_may_pass

    assert set(mcts._SEARCHES) == set(Search)
    assert {rule: policy_may_pass(rule) for rule in PassRule} == {
        "free": True, "fill": False, "settled": False, "decided": False}


def test_the_command_lines_choices_come_from_the_enums():
    from fastgo_cli.main import command_parser

    wanted = {"--device": Device.choices(), "--backend": Backend.choices(),
              "--backend-a": Backend.choices(), "--search": Search.choices(),
              "--search-a": Search.choices()}
    seen = set()
    for command in ("gtp", "arena", "analysis", "play", "serve"):
        for action in command_parser(command)[0]._actions:
            for flag in action.option_strings:
                if flag in wanted:
                    assert tuple(action.choices) == wanted[flag], f"{command} {flag}"
                    seen.add(flag)
    assert seen == set(wanted)
    gtp = command_parser("gtp")[0]
    args = gtp.parse_args(["--pass-rule", "settled"])
    assert args.pass_rule is PassRule.SETTLED
    assert gtp.parse_args([]).pass_rule == "fill"


def test_the_config_validates_against_the_enums_and_holds_members():
    config = loads_config('[selfplay]\nsearch = "gumbel"\n[trainer]\nalgorithm = "reinforce"\n')
    assert config.selfplay.search is Search.GUMBEL
    assert config.trainer.algorithm is Algorithm.REINFORCE
    defaults = loads_config("")
    assert defaults.selfplay.search is Search.PUCT
    assert defaults.trainer.algorithm is Algorithm.ALPHAZERO
    with pytest.raises(ConfigError, match=r"selfplay.search: must be one of \['puct', 'gumbel'\], "
                                          r"got 'mcts'"):
        loads_config('[selfplay]\nsearch = "mcts"\n')
    with pytest.raises(ConfigError, match=r"trainer.algorithm: must be one of \['alphazero', "
                                          r"'reinforce', 'value'\], got 'sl'"):
        loads_config('[trainer]\nalgorithm = "sl"\n')
    with pytest.raises(ConfigError, match="trainer.algorithm: must be one of"):
        loads_config("[trainer]\nalgorithm = 1\n")


def test_the_search_settings_take_a_name_and_hold_a_member():
    from fastgo.search_settings import SearchSettings

    assert SearchSettings(search="gumbel").search is Search.GUMBEL
    with pytest.raises(ValueError, match="unknown search 'mcts'"):
        SearchSettings(search="mcts")


def test_one_map_from_an_algorithm_to_its_worker():
    assert selfplay_worker("alphazero") is Worker.SEARCH
    assert selfplay_worker(Algorithm.REINFORCE) is selfplay_worker("value") is Worker.POLICY
    assert {selfplay_worker(a) for a in Algorithm} == set(Worker)
    with pytest.raises(ValueError):
        selfplay_worker("supervised")


@pytest.mark.parametrize("path", ["roles/selfplay.py", "fastgo_cli/bench/selfplay.py",
                                  "selfplay_workers/policy_worker.py"])
def test_every_place_that_picks_a_worker_asks_the_one_map(path):
    tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
    calls = [node for node in ast.walk(tree) if isinstance(node, ast.Call)
             and getattr(node.func, "id", None) == "selfplay_worker"]
    assert calls, f"{path} picks a worker without fastgo.variants.selfplay_worker"


def test_the_role_registry_re_exports_the_variants():
    import fastgo.variants
    import roles.registry

    for name in ("Algorithm", "Search", "Worker", "selfplay_worker"):
        assert getattr(roles.registry, name) is getattr(fastgo.variants, name)
        assert name in roles.registry.__all__


def _strings(node):
    """The string constants `node` is, or holds as a tuple, list or set display."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {node.value}
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return set().union(*(_strings(e) for e in node.elts)) if node.elts else set()
    return set()


def bare_variant_compares(text, filename="<text>"):
    """[(line, source)] of each comparison in Python `text` against a search's bare name
    ("puct", "gumbel") or of an algorithm against an algorithm's bare name."""
    found = []
    for node in ast.walk(ast.parse(text, filename=filename)):
        if not isinstance(node, ast.Compare):
            continue
        operands = [node.left, *node.comparators]
        names = set().union(*(_strings(o) for o in operands))
        about_algorithm = any("algorithm" in ast.unparse(o).lower() for o in operands
                              if not _strings(o))
        if names & SEARCH_NAMES or (about_algorithm and names & ALGORITHM_NAMES):
            found.append((node.lineno, ast.unparse(node)))
    return found


def test_the_scan_finds_a_bare_compare():
    assert bare_variant_compares('x = s.search == "gumbel"\n')
    assert bare_variant_compares('if options.search != "puct": pass\n')
    assert bare_variant_compares('if config.trainer.algorithm in ("reinforce", "value"): pass\n')
    assert bare_variant_compares('if self.algorithm == "reinforce": pass\n')
    assert not bare_variant_compares('if baseline == "value": pass\n')
    assert not bare_variant_compares("x = s.search == Search.GUMBEL\n")


def test_no_module_compares_against_a_variants_bare_string():
    found = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            text = path.read_text(encoding="utf-8")
            found += [f"{path.relative_to(ROOT)}:{line}: {source}"
                      for line, source in bare_variant_compares(text, str(path))]
    assert not found, "compare with the member of fastgo.variants instead:\n" + "\n".join(found)
