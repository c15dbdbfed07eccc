"""fastgo_cli.player_flags: every command's player flags become one PlayerSettings in one
function: gtp's, play's and analysis's flags and defaults, the arena's per-side flags (B taking
A's visits, search and PUCT constants where it gives none, its own leaves and backend), compare's
visits; a default under a name that is no flag's is refused."""
import pytest

from fastgo.search_settings import SearchSettings
from fastgo_cli.arena_cmd import arena_settings, make_arena_plan
from fastgo_cli.main import command_parser
from fastgo_cli.player_flags import settings_from_flags
from play.player_settings import PLAYER_SEARCH, PlayerSettings


def parse(command, *argv):
    parser, _ = command_parser(command)
    return parser.parse_args([str(a) for a in argv])


def test_gtp_flags_and_the_commands_defaults():
    args = parse("gtp", "--model", "m.ckpt", "--search", "gumbel", "--resign", "-0.9",
                 "--pass-rule", "free", "--device", "cpu", "--backend", "torch")
    settings = settings_from_flags(args, visits=400, capacity=args.leaves)
    assert (settings.visits, settings.pass_rule, settings.device, settings.backend) == \
        (400, "free", "cpu", "torch")
    assert settings.capacity == 8 == settings.search.leaves_per_game
    assert settings.search == SearchSettings.for_play(search="gumbel", leaves_per_game=8,
                                                      resign_threshold=-0.9)
    plain = settings_from_flags(parse("gtp", "--model", "m.ckpt", "--visits", "16"), visits=400)
    assert plain.visits == 16 and plain.search.search == "puct" and plain.pass_rule == "fill"
    assert plain.search.resign_threshold is None


def test_play_and_analysis_flags():
    played = settings_from_flags(parse("play", "--model", "m.ckpt"), leaves=8, capacity=8)
    assert (played.visits, played.device, played.capacity) == (200, "auto", 8)
    assert played.search == PLAYER_SEARCH.replace(leaves_per_game=8)
    analysed = settings_from_flags(parse("analysis", "--model", "m.ckpt", "--threads", "3"))
    assert (analysed.visits, analysed.threads, analysed.search.leaves_per_game) == (500, 3, 4)


def test_the_arena_sides_b_takes_as_visits_search_and_constants_where_it_gives_none():
    args = parse("arena", "a.ckpt", "b.ckpt", "--visits", "32", "--search-a", "gumbel",
                 "--c-puct-a", "2.0", "--fpu-b", "0.5", "--leaves-a", "4", "--backend-a",
                 "torch", "--opening-moves", "3", "--no-table")
    plan = make_arena_plan(args)
    a, b = plan.settings("A"), plan.settings("B")
    assert (a.visits, b.visits, a.opening_moves, b.opening_moves) == (32, 32, 3, 3)
    assert a.search.search == b.search.search == "gumbel"
    assert a.search.c_puct == b.search.c_puct == 2.0
    assert (a.search.fpu_reduction, b.search.fpu_reduction) == (PLAYER_SEARCH.fpu_reduction, 0.5)
    assert (a.search.leaves_per_game, b.search.leaves_per_game) == (4, 1)
    assert (a.backend, b.backend, a.device) == ("torch", "auto", "cpu")
    args = parse("arena", "a.ckpt", "b.ckpt", "--visits-b", "8", "--search-b", "puct")
    args.visits = 16
    assert arena_settings(args, "A").visits == 16 and arena_settings(args, "B").visits == 8
    assert arena_settings(args, "B").search.search == "puct"


def test_at_equal_time_the_visits_are_one_until_the_speed_sets_them():
    args = parse("arena", "a.ckpt", "b.ckpt", "--move-seconds", "0.5", "--no-table")
    plan = make_arena_plan(args)
    assert plan.settings("A").visits == plan.settings("B").visits == 1


def test_compare_takes_its_visits():
    args = parse("compare", "quickstart", "quickstart", "--visits", "12")
    assert settings_from_flags(args, opening_moves=2) == PlayerSettings(visits=12, opening_moves=2)


def test_a_default_that_is_no_flags_is_refused():
    with pytest.raises(TypeError, match="no player flag is called"):
        settings_from_flags(parse("play", "--model", "m.ckpt"), leaf=8)
