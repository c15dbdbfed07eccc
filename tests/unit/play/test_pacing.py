"""play.equal_time.pace_sides, the one pacing of network sides (the arena's, the evaluator's):
equal time turns each network side's measured one-thread speed into its pace; sides of one
network shape, backend and search share one rate (the fastest of all their measurements), sides
that differ keep their own; a speed kept from an earlier call is not measured again."""
import pytest

import play.equal_time
from fastgo.search_settings import SearchSettings
from network.batch_evaluator import UniformEvaluator
from play.arena.sides import pace_line
from play.equal_time import TIMING_ROUNDS, pace_sides, speed_key
from play.match import SearchSide


def side(shape, backend="torch-fp32", settings=None, name="net", size=9):
    """A side over a uniform evaluator standing for a network of `shape` on `backend`."""
    return SearchSide(UniformEvaluator(size), 1, settings or SearchSettings.for_play(),
                      name=name, shape=(shape, size, "alphazero", backend))


def time_network_sides(sides, seconds, size, komi):
    """The arena's pacing: pace_sides saying each side's speed as `fastgo arena` prints it."""
    pace_sides(sides, seconds, size, komi,
               report=lambda which, rate, visits: print(pace_line(which, rate, visits, seconds)))


@pytest.fixture
def measured(monkeypatch):
    """one_thread_rate replaced by a list of figures handed out in the order asked for."""
    figures = []

    def fake(evaluator, settings, size, komi):
        return figures.pop(0)

    monkeypatch.setattr(play.equal_time, "one_thread_rate", fake)
    return figures


def test_two_checkpoints_of_one_network_share_the_fastest_figure(measured, capsys):
    a, b = side("b4c32", name="A"), side("b4c32", name="B")
    assert speed_key(a) == speed_key(b)
    # the order of measuring: A, B, A, B; B's 2,000 is the fastest of the four
    measured.extend([1500.0, 2000.0, 1400.0, 1600.0])
    time_network_sides([("A", a), ("B", b)], None, 9, 7.5)
    assert not measured and TIMING_ROUNDS == 2
    assert a.rate == b.rate == 2000.0
    out = capsys.readouterr().out
    assert out.count("searches 2,000 visits/s on one thread") == 2
    # at a time a move, both get the visits 2,000 a second fit in it
    c, d = side("b4c32"), side("b4c32")
    measured.extend([900.0, 1000.0, 950.0, 800.0])
    time_network_sides([("A", c), ("B", d)], 0.5, 9, 7.5)
    assert c.visits == d.visits == play.equal_time.visits_for(0.5, 1000.0)


@pytest.mark.parametrize("other", [
    dict(shape="b6c64"),                                            # another network shape
    dict(shape="b4c32", backend="openvino-int8"),                  # the same one, another backend
    dict(shape="b4c32", settings=SearchSettings.for_play(leaves_per_game=4)),  # another search
])
def test_sides_that_search_at_different_speeds_keep_their_own(measured, other):
    a, b = side("b4c32"), side(**other)
    assert speed_key(a) != speed_key(b)
    measured.extend([1500.0, 700.0, 1400.0, 750.0])
    time_network_sides([("A", a), ("B", b)], None, 9, 7.5)
    assert (a.rate, b.rate) == (1500.0, 750.0)


def test_an_evaluator_without_a_network_config_is_its_own_key(measured):
    a = SearchSide(UniformEvaluator(9), 1, SearchSettings.for_play())
    b = SearchSide(UniformEvaluator(9), 1, SearchSettings.for_play())
    assert speed_key(a) is a and speed_key(b) is b
    measured.extend([100.0, 200.0, 300.0, 150.0])
    time_network_sides([("A", a), ("B", b)], None, 9, 7.5)
    assert (a.rate, b.rate) == (300.0, 200.0)


def test_a_speed_kept_from_an_earlier_call_is_not_measured_again(measured):
    """The evaluator keeps its rates between pairings: a network shape measured once (one
    round) is paced from the kept figure the next time, and only a new shape is measured."""
    rates, said = {}, []
    first = side("b4c32")
    measured.extend([1200.0])
    pace_sides([("net", first)], 0.5, 9, 7.5, rates=rates, rounds=1,
               report=lambda which, rate, visits: said.append((which, rate, visits)))
    assert rates == {speed_key(first): 1200.0} and not measured
    assert first.visits == play.equal_time.visits_for(0.5, 1200.0) and first.rate == 1200.0
    again, other = side("b4c32"), side("b6c64")
    measured.extend([300.0])                         # only b6c64's speed is measured
    pace_sides([("net", again), ("other", other)], 0.5, 9, 7.5, rates=rates, rounds=1,
               report=lambda which, rate, visits: said.append((which, rate, visits)))
    assert not measured and (again.rate, other.rate) == (1200.0, 300.0)
    assert said == [("net", 1200.0, play.equal_time.visits_for(0.5, 1200.0)),
                    ("other", 300.0, play.equal_time.visits_for(0.5, 300.0))]
