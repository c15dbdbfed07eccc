"""The [evaluator] section: the evaluator's settings in their own section, its anchors read by
the one player-spec grammar, and the keys it took over from [cluster] refused with their new
name."""
import dataclasses

import pytest

from rundata.config import ClusterConfig, Config, ConfigError, EvaluatorConfig, load_config, loads_config
from rundata.config.evaluator import FROM_CLUSTER


def write(tmp_path, text):
    path = tmp_path / "run.toml"
    path.write_text(text)
    return str(path)


def test_evaluator_anchors_are_player_specs():
    from rundata.config import ConfigError, loads_config

    config = loads_config('[evaluator]\nanchors = ["random", "gnugo:10", "gtp:gnugo --mode gtp", '
                          '"runs/a/ckpt-000000100.ckpt", "MCTS:50"]\n')
    assert config.evaluator.anchors[1] == "gnugo:10"
    for bad in ('["gnugo:11"]', '["mcts"]', '["foo:3"]', '["gtp: "]', '[""]',
                '["random", "Random"]'):
        with pytest.raises(ConfigError, match="evaluator.anchors"):
            loads_config(f"[evaluator]\nanchors = {bad}\n")
    with pytest.raises(ConfigError, match="evaluator.max_games"):
        loads_config("[evaluator]\nbatch_games = 16\nmax_games = 8\n")


@pytest.mark.parametrize("anchor", ["katago:1,t=9", "katago:1,r=1.5", "katago:0", "mcts:0",
                                    "katago:1,t=1,t=2", "katago:1:", "gnugo:-1"])
def test_an_anchor_is_refused_with_the_arenas_own_error(anchor):
    # one grammar: the config refuses what the arena refuses, with the same words
    from fastgo.player_spec import parse_spec
    from rundata.config import ConfigError, loads_config

    with pytest.raises(ValueError) as arena:
        parse_spec(anchor)
    with pytest.raises(ConfigError) as config:
        loads_config(f'[evaluator]\nanchors = ["{anchor}"]\n')
    assert "evaluator.anchors" in str(config.value) and str(arena.value) in str(config.value)


def test_an_anchor_named_twice_is_refused_however_it_is_written():
    from rundata.config import ConfigError, loads_config

    config = loads_config('[evaluator]\nanchors = ["katago:1,t=4", "katago:1,t=2", "KATAGO:4"]\n')
    assert config.evaluator.anchors == ("katago:1,t=4", "katago:1,t=2", "KATAGO:4")
    for pair in ('"katago:1,t=4", "katago:1,t=4.0"', '"gnugo:5", "gnugo: 5"',
                 '"katago:1,r=0.5,t=1", "katago:1,t=1,r=0.5"'):
        with pytest.raises(ConfigError, match="named twice"):
            loads_config(f"[evaluator]\nanchors = [{pair}]\n")


def test_the_evaluators_keys_are_its_own_section():
    config = loads_config("[evaluator]\nevery = 3\ninterval_s = 0\nvisits = 16\n"
                          "move_seconds = 0.5\nanchors_per_checkpoint = 1\nbatch_games = 4\n"
                          "max_games = 12\nelo_width = 200\ncpu_share = 0.5\n"
                          "final_rating_s = 30\nanchors = [\"random\"]\n")
    assert dataclasses.astuple(config.evaluator) == (3, 0.0, 16, 0.5, ("random",), 1, 4, 12,
                                                     200.0, 0.5, 30.0)
    assert Config().evaluator == EvaluatorConfig()
    cluster = {f.name for f in dataclasses.fields(ClusterConfig)}
    evaluator = {f.name for f in dataclasses.fields(EvaluatorConfig)}
    assert not cluster & set(FROM_CLUSTER)                # none of the old keys is left there
    assert set(FROM_CLUSTER.values()) == evaluator        # and every new one came from there
    assert "evaluate" in cluster and "evaluator_resources" in cluster   # which roles run, where


@pytest.mark.parametrize("old, new", sorted(FROM_CLUSTER.items()))
def test_a_cluster_key_of_the_evaluator_is_refused_with_its_new_name(tmp_path, old, new):
    value = '["random"]' if old == "anchors" else "8"
    path = write(tmp_path, f"[cluster]\nworkers = 1\n{old} = {value}\n")
    with pytest.raises(ConfigError) as err:
        load_config(path)
    assert str(err.value) == (f"{path}: 'cluster.{old}' is no longer a key: use {new} in "
                              f"[evaluator] (evaluator.{new})")
    assert "\n" not in str(err.value)
    with pytest.raises(ConfigError) as err:              # the same through --set
        load_config(write(tmp_path, ""), overrides=[f"cluster.{old}={value}"])
    assert str(err.value) == (f"--set: 'cluster.{old}' is no longer a key: use {new} in "
                              f"[evaluator] (evaluator.{new})")
    loaded = load_config(write(tmp_path, ""), overrides=[f"evaluator.{new}={value}"])
    assert getattr(loaded.evaluator, new) in (8, ("random",))
