"""comparison.matches: `fastgo compare` plays its matches through the arena in this process:
the ArenaPlan of a match (the checkpoint as A on its run's backend, the opponent as B, the
plan's games and pace, the run's board size and komi, its JSON, no ratings table), and a real
match of a checkpoint against `random` played from it, its lines in the match's log and under
its prefix, its JSON the one read_match takes; a player that cannot play is one line."""
import json

from comparison.matches import arena_plan, play_arena
from comparison.plan import Opponent, Plan, RunPlan
from comparison.results import match_paths, read_match
from fastgo_cli.compare_cmd import make_plan
from fastgo_cli.main import command_parser
from network.checkpoint import save_checkpoint
from network.model import build_model
from play.arena.plan import DEFAULT_OPENING_MOVES
from play.player_settings import PlayerSettings
from rundata.config import loads_config


def parse(*argv):
    parser, _ = command_parser("compare")
    return parser.parse_args([str(a) for a in argv])


def test_the_matches_plans(tmp_path):
    plan = make_plan(parse("quickstart", "quickstart", "--duration", "90s", "--out",
                           tmp_path / "o", "--opponents", "random", "--games", "6",
                           "--visits", "8"))
    run = plan.runs[0]
    arena = arena_plan(run, "/r/a/checkpoints/ckpt-000000010.ckpt", plan.opponents[0], plan, 3,
                       "m.json")
    assert (arena.a, arena.b) == ("/r/a/checkpoints/ckpt-000000010.ckpt", "random")
    assert (arena.games, arena.visits, arena.seed, arena.json_path) == (6, 8, 3, "m.json")
    assert (arena.size, arena.komi, arena.settings_a.backend) == (run.size, run.komi,
                                                                    run.backend)
    assert arena.settings_a.visits == arena.settings_b.visits == 8
    assert arena.settings_a.opening_moves == DEFAULT_OPENING_MOVES
    assert arena.table is None                                # no ratings table
    assert arena.move_seconds is None and arena.game_seconds is None
    timed = make_plan(parse("quickstart", "quickstart", "--duration", "90s", "--out",
                            tmp_path / "t", "--opponents", "random", "--move-seconds", "0.5"))
    arena = arena_plan(run, "A.ckpt", timed.opponents[0], timed, 3, "m.json")
    assert arena.move_seconds == 0.5 and arena.visits is None and arena.game_seconds is None
    assert timed.pace == "0.5 s a move" and plan.pace == "8 visits"
    clocked = make_plan(parse("quickstart", "quickstart", "--duration", "90s", "--out",
                              tmp_path / "c", "--opponents", "random", "--game-seconds", "40"))
    arena = arena_plan(run, "A.ckpt", clocked.opponents[0], clocked, 3, "m.json")
    assert arena.game_seconds == 40 and arena.visits is None and arena.move_seconds is None
    assert clocked.pace == "40 s a game"


def test_the_head_to_head_plan(tmp_path):
    plan = make_plan(parse("quickstart", "9x9_cpu", "--duration", "90s", "--out",
                           tmp_path / "o", "--opponents", "random", "--games", "4",
                           "--visits", "2"))
    run_a, run_b = plan.runs
    arena = arena_plan(run_a, "A.ckpt", Opponent("b", "B.ckpt"), plan, 5, "h.json",
                       backend_b=run_b.backend)
    assert (arena.a, arena.b) == ("A.ckpt", "B.ckpt")
    assert arena.settings_b.backend == run_b.backend
    assert arena.settings_a.backend == run_a.backend
    assert arena_plan(run_a, "A.ckpt", plan.opponents[0], plan, 5, "h.json").settings_b.backend \
        == "auto"


def test_a_match_played_in_process_is_the_one_read_back(tmp_path):
    config = loads_config("[model]\nboard_size = 5\nblocks = 1\nchannels = 8\n")
    checkpoint = tmp_path / "a" / "checkpoints" / "ckpt-000000003.ckpt"
    checkpoint.parent.mkdir(parents=True)
    save_checkpoint(checkpoint, build_model(config.model, seed=3), step=3)
    run = RunPlan(name="a", config_path="x.toml", config_name="x", overrides=(), size=5,
                  komi=7.5, backend="torch-fp32", anchors=(), shutdown_s=1.0)
    opponent = Opponent("random", "random")
    plan = Plan(out=str(tmp_path), runs=(run, run), seconds=None, games=2, visits=2,
                opponents=(opponent,), seed=4,
                player=PlayerSettings(visits=2, opening_moves=DEFAULT_OPENING_MOVES))
    json_path, log_path = match_paths(plan.out, "a", opponent)
    said = []
    code, stopped = play_arena(arena_plan(run, str(checkpoint), opponent, plan, 4, json_path),
                               log_path, "[a vs random] ", said.append)
    assert (code, stopped) == (0, None)
    entry = read_match(json_path, str(checkpoint), 2, 2)
    assert entry is not None and entry["games"] == 2
    data = json.loads(open(json_path).read())
    assert data["a"].startswith(f"{checkpoint}#3@v2") and data["b"] == "random"
    logged = open(log_path).read().splitlines()
    assert logged and said == ["[a vs random] " + line for line in logged]
    assert logged[0].startswith("fastgo arena: A ") and "games: 2" in logged
    # a player that cannot play: its one line in the log, status 2, nothing written
    code, stopped = play_arena(arena_plan(run, str(tmp_path / "none.ckpt"), opponent, plan, 4,
                                          str(tmp_path / "n.json")),
                               log_path, "[x] ", said.append)
    assert (code, stopped) == (2, None) and not (tmp_path / "n.json").exists()
    assert said[-1].startswith("[x] fastgo arena: A ") and "no such checkpoint" in said[-1]


def test_a_signal_during_a_match_stops_it_and_is_named(tmp_path, monkeypatch):
    """A SIGTERM while a match is played in process: the arena ends it (its finished games
    reported, interrupted in its JSON) and play_arena names the signal, which compare reports
    as what stopped it; the handlers from before the match come back."""
    import signal

    import play.match

    real, calls = play.match._count, []

    def count(*args, **kwargs):
        calls.append(1)
        if len(calls) == 30:
            signal.raise_signal(signal.SIGTERM)
        return real(*args, **kwargs)

    monkeypatch.setattr(play.match, "_count", count)
    before = signal.getsignal(signal.SIGTERM)
    run = RunPlan(name="a", config_path="x.toml", config_name="x", overrides=(), size=5,
                  komi=7.5, backend="torch-fp32", anchors=(), shutdown_s=1.0)
    opponent = Opponent("random", "random")
    plan = Plan(out=str(tmp_path), runs=(run, run), seconds=None, games=40, visits=2,
                opponents=(opponent,), seed=4,
                player=PlayerSettings(visits=2, opening_moves=DEFAULT_OPENING_MOVES))
    json_path, log_path = match_paths(plan.out, "a", opponent)
    arena = arena_plan(run, "mcts:4", opponent, plan, 4, json_path)
    said = []
    assert play_arena(arena, log_path, "", said.append) == (130, "SIGTERM")
    assert signal.getsignal(signal.SIGTERM) is before
    data = json.loads(open(json_path).read())
    assert data["interrupted"] is True and data["games"] < 40
    assert f"fastgo arena: interrupted after {data['games']} games" in said
