"""The dashboard's endpoints without a browser: the snapshot of a run directory (its figures
against what the files hold), the event stream, replays, hostile requests answered with a JSON
error while the server keeps serving and the run directory stays unchanged, the token, the
bounds on event streams; and the request checks under hypothesis."""
from __future__ import annotations

import asyncio
import hashlib
import json
import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dashboard import request_checks as checks
from dashboard.server import Dashboard, ServerLimits


def tree_digest(root):
    """(path, size, digest) of every file under root: the run directory's whole content."""
    out = []
    for folder, _, files in os.walk(root):
        for name in sorted(files):
            path = os.path.join(folder, name)
            with open(path, "rb") as handle:
                out.append((path, os.path.getsize(path), hashlib.sha1(handle.read()).hexdigest()))
    return sorted(out)


def with_client(dashboard, body):
    from aiohttp.test_utils import TestClient, TestServer

    async def main():
        async with TestClient(TestServer(dashboard.app())) as client:
            return await body(client)
    return asyncio.run(main())


@pytest.fixture
def run(tmp_path, dashboard_run):
    return dashboard_run(tmp_path / "run")


def test_snapshot_reads_what_the_files_hold(run):
    async def body(client):
        response = await client.get("/api/snapshot")
        assert response.status == 200
        return await response.json()
    snap = with_client(Dashboard(run.root), body)
    assert snap["status"]["step"] == 300 and snap["status"]["evals_per_s"] == 1234.5
    assert snap["status"]["restarts"] == {"selfplay-w0": 1}
    points = snap["strength"]["points"]
    assert [p["player"] for p in points] == ["ckpt-100", "ckpt-200", "ckpt-300"]
    # each scored 1, 2, 3 of 10 against gnugo:10 (the stand-in at 1800): below 1800, rising
    cgos = [p["cgos"][0] for p in points]
    assert cgos == sorted(cgos) and cgos[-1] < 1800 and points[0]["gnugo"] == {"gnugo:10": [1, 9, 0]}
    assert snap["strength"]["anchors"]["gnugo:10"]["cgos"] == [1800.0] * 3
    assert points[1]["gain"] is not None and points[0]["gain"] is None
    assert [(c["name"], c["file"]) for c in snap["checkpoints"]] == [
        ("ckpt-300", "ckpt-000000300.ckpt"), ("ckpt-200", "ckpt-000000200.ckpt"),
        ("ckpt-100", "ckpt-000000100.ckpt")]
    assert len(snap["games"]) == 6 and snap["losses"]["columns"]["loss"][0] == 3.0


def test_replay_of_a_self_play_game(run):
    from fastgo.game import Game
    from rundata.shards import read_shard

    record = read_shard(os.path.join(run.shards, "w0-000001.shard")).games[2]

    async def body(client):
        response = await client.get("/api/game/w0-000001.shard:2")
        return await response.json()
    game = with_client(Dashboard(run.root), body)
    replay = Game(9, 7.5)
    for move in record.moves:
        replay.play(int(move))
    final = "".join(".BW"[int(v)] for v in replay.board.stones().ravel())
    assert game["boards"][-1] == final and len(game["boards"]) == len(record.moves) + 1
    assert game["values"][0] == -0.5 and game["values"][-1] == 0.5
    assert game["visits"][0] == 1.0 and game["total_visits"][0] == 1.0


HOSTILE = [
    ("GET", "/api/game/..%2F..%2Fetc%2Fpasswd:0", None, 404),
    ("GET", "/api/game/w0-000001.shard:99", None, 404),
    ("GET", "/api/game/nonsense", None, 404),
    ("GET", "/static/..%2Fserver.py", None, 404),
    ("GET", "/static/server.py", None, 404),
    ("POST", "/api/play", b"\xff\xfe{", 400),
    ("POST", "/api/play", b"[1, 2]", 400),
    ("POST", "/api/play", b'{"checkpoint": ' + b"[" * 990 + b"]" * 990 + b"}", 400),
    ("POST", "/api/play", b'{"checkpoint": "../../etc/passwd"}', 404),
    ("POST", "/api/play", b'{"checkpoint": "ckpt-000000300.ckpt", "visits": "many"}', 400),
    ("POST", "/api/play", b'{"checkpoint": "ckpt-000000300.ckpt", "visits": 5, "seconds": 1}', 400),
    ("POST", "/api/play", b'{"checkpoint": "ckpt-000000300.ckpt", "colour": "B"}', 400),
    ("POST", "/api/play", b'{"checkpoint": "x"}' + b" " * (checks.MAX_BODY_BYTES + 1), 413),
    ("POST", "/api/play/" + "ab" * 12 + "/move", b'{"move": "D4"}', 404),
    ("POST", "/api/play/zzz/move", b'{"move": "D4"}', 404),
    ("GET", "/api/nothing", None, 404),
    ("GET", "/api/game/%ff%fe:1", None, 404),
    ("GET", "/api/game/w0-000001.shard:%00", None, 404),
    ("POST", "/api/play/%ff/move", b'{"move": "D4"}', 404),
    ("DELETE", "/api/play/" + "0" * 24, None, 404),
    ("POST", "/api/snapshot", b"{}", 405),
    # numbers too large for a float (valid JSON; float() of them raises OverflowError)
    ("POST", "/api/play", b'{"checkpoint": "ckpt-000000300.ckpt", "seconds": 1' + b"0" * 400 + b"}",
     400),
    ("POST", "/api/play", b'{"checkpoint": "ckpt-000000300.ckpt", "seconds": -1' + b"0" * 400
     + b"}", 400),
    ("POST", "/api/play", b'{"checkpoint": "ckpt-000000300.ckpt", "seconds": 1e400}', 400),
    ("POST", "/api/play", b'{"checkpoint": "ckpt-000000300.ckpt", "seconds": NaN}', 400),
    ("POST", "/api/play", b'{"checkpoint": "ckpt-000000300.ckpt", "visits": 1' + b"0" * 400 + b"}",
     400),
    ("POST", "/api/play", b'{"checkpoint": "ckpt-000000300.ckpt", "visits": 5.0}', 400),
]


def test_hostile_requests_get_json_errors_and_change_nothing(run):
    before = tree_digest(run.root)

    async def body(client):
        for method, path, data, status in HOSTILE:
            response = await client.request(method, path, data=data)
            assert response.status == status, (method, path, await response.text())
            assert "error" in await response.json(), path
        return (await client.get("/api/snapshot")).status
    assert with_client(Dashboard(run.root), body) == 200          # still serving
    assert tree_digest(run.root) == before


def test_hundreds_of_clients_at_once(run):
    # 300 snapshot requests and 40 event streams at once: each answered (200) or refused with
    # a JSON error (503), the streams over the limit of 32 refused, and the server serves on
    async def body(client):
        async def snapshot():
            response = await client.get("/api/snapshot")
            await response.json()
            return response.status
        statuses = await asyncio.gather(*(snapshot() for _ in range(300)))
        streams = await asyncio.gather(*(client.get("/api/events") for _ in range(40)))
        stream_statuses = sorted(r.status for r in streams)
        for r in streams:
            r.close()
        after = await client.get("/api/snapshot")
        return statuses, stream_statuses, after.status
    statuses, streams, after = with_client(Dashboard(run.root), body)
    assert set(statuses) <= {200, 503} and statuses.count(200) >= 64
    assert streams == [200] * 32 + [503] * 8 and after == 200


def test_token_required_when_set(run):
    async def body(client):
        refused = await client.get("/api/snapshot")
        wrong = await client.get("/api/snapshot?token=wrongwrong")
        right = await client.get("/api/snapshot?token=s3cret-token")
        bearer = await client.get("/", headers={"Authorization": "Bearer s3cret-token"})
        # the page loaded with the token leaves a cookie: its own files load without it
        page = await client.get("/?token=s3cret-token")
        style = await client.get("/static/style.css")
        return refused.status, (await refused.json())["error"], wrong.status, right.status, \
            bearer.status, page.status, style.status
    statuses = with_client(Dashboard(run.root, token="s3cret-token"), body)
    assert statuses[:1] + statuses[2:] == (401, 401, 200, 200, 200, 200) and "token" in statuses[1]
    # without the page's cookie, a static file is refused too
    assert with_client(Dashboard(run.root, token="s3cret-token"),
                       lambda client: _status(client, "/static/style.css")) == 401


async def _status(client, path):
    return (await client.get(path)).status


def test_event_stream_sends_the_snapshot_and_is_bounded(run, dashboard_checkpoint):
    async def body(client):
        first = await client.get("/api/events")
        line = await first.content.readline()
        assert line == b"event: snapshot\n"
        data = json.loads((await first.content.readline())[len(b"data: "):])
        assert len(data["strength"]["points"]) == 3
        refused = await client.get("/api/events")           # over the limit of one stream
        status = refused.status, (await refused.json())["error"]
        dashboard_checkpoint(run.root, 400)                 # a new rated checkpoint arrives
        while True:
            line = await asyncio.wait_for(first.content.readline(), 20)
            if line.startswith(b"data: "):
                data = json.loads(line[len(b"data: "):])
                break
        first.close()
        return status, data
    status, data = with_client(Dashboard(run.root, limits=ServerLimits(event_clients=1)), body)
    assert status[0] == 503 and "event streams" in status[1]
    assert [p["player"] for p in data["strength"]["points"]][-1] == "ckpt-400"


def test_dashboard_command_refuses_another_host_without_a_token(tmp_path, capsys):
    from fastgo_cli.main import main
    assert main(["dashboard", str(tmp_path), "--host", "0.0.0.0"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "--token" in err
    assert main(["dashboard", str(tmp_path / "absent")]) == 2
    assert "not a directory" in capsys.readouterr().err


def test_a_body_nested_at_the_bound_is_parsed_and_past_it_refused():
    def body(levels):
        return b'{"move": ' + b"[" * (levels - 1) + b"]" * (levels - 1) + b"}"
    assert checks.json_body(body(checks.MAX_BODY_DEPTH)) == {"move": json.loads(
        b"[" * (checks.MAX_BODY_DEPTH - 1) + b"]" * (checks.MAX_BODY_DEPTH - 1))}
    for levels in (checks.MAX_BODY_DEPTH + 1, 990):
        with pytest.raises(checks.BadRequest, match=f"nested deeper than {checks.MAX_BODY_DEPTH} "):
            checks.json_body(body(levels))


HUGE = st.sampled_from([10 ** 400, -(10 ** 400), 2 ** 1024, 10 ** 309])


@settings(max_examples=150, deadline=None)
@given(st.one_of(st.binary(max_size=200),
                 st.dictionaries(st.one_of(st.text(max_size=12), st.sampled_from(
                     ["checkpoint", "color", "visits", "seconds", "move"])),
                                 st.one_of(st.none(), st.booleans(), st.integers(), st.floats(),
                                           HUGE, st.text(max_size=20)), max_size=5)
                 .map(lambda d: json.dumps(d).encode())))
def test_request_parsing_refuses_with_bad_request_only(raw):
    # whatever the body, the checks give a value or BadRequest, never another error
    try:
        body = checks.json_body(raw)
    except checks.BadRequest:
        return
    for check in (checks.new_game, lambda b: checks.move(b, 9)):
        try:
            result = check(body)
        except checks.BadRequest as err:
            assert str(err)
            continue
        if check is checks.new_game:
            name, colour, visits, seconds = result
            assert isinstance(name, str) and (visits is None) != (seconds is None)
        else:
            assert 0 <= result <= 81


def test_only_the_newest_shards_stay_held(run, write_shard, game_record, random_moves):
    import numpy as np

    from dashboard import run_view
    from dashboard.run_view import RunView

    view = RunView(run.root)
    rng = np.random.default_rng(5)
    for k in range(run_view.NEWEST_SHARDS + 3):
        view.games()
        record = game_record(9, 7.5, random_moves(9, 7.5, rng, length=10), 0)
        path = write_shard(run.shards, [record], f"w1-{k:06d}.shard", size=9, komi=7.5)
        os.utime(path, ns=(2_000_000_000_000_000_000 + k, 2_000_000_000_000_000_000 + k))
    games = view.games()
    held = [key for key in view._cache if key.startswith("shard:")]
    assert len(held) <= run_view.NEWEST_SHARDS
    assert "shard:w0-000001.shard" not in held          # the oldest shard was let go
    assert games[0]["id"].startswith("w1-")


def test_idle_games_are_closed(run, monkeypatch):
    # a game idle for longer than IDLE_S is closed (its engines with it) and its id refused
    from dashboard import server

    closed = []

    class Idle:
        lock = asyncio.Lock()
        touched = 0.0

        async def close(self):
            closed.append(True)

    dashboard = Dashboard(run.root)
    ident = "ab" * 12
    dashboard.sessions[ident] = Idle()
    monkeypatch.setattr(server.time, "monotonic", lambda: server.IDLE_S + 1.0)

    async def body(client):
        await dashboard._expire()
        response = await client.get(f"/api/play/{ident}")
        return response.status
    assert with_client(dashboard, body) == 404 and closed == [True]


def strict_json(text):
    """json.loads as a browser's JSON.parse reads: NaN and Infinity are not JSON."""
    return json.loads(text, parse_constant=lambda name: pytest.fail(f"{name} in an answer"))


def test_status_files_with_numbers_no_float_holds_or_nan_give_a_finite_snapshot(run):
    """A role's status file holding 10**400, NaN or -Infinity: every snapshot answers 200 with
    JSON a browser parses, the figures null (or left out), the rest of the run shown."""
    logs = run.logs
    huge = "1" + "0" * 400
    with open(os.path.join(logs, "train.status.json"), "w") as handle:
        handle.write('{"games": %s, "step": 300, "loss": NaN, "latest": 300, '
                     '"endings": {"games": %s, "passes": 0.5, "move_cap": 0, "resign": 0}}'
                     % (huge, huge))
    with open(os.path.join(logs, "evaluate.status.json"), "w") as handle:
        handle.write('{"cpu_share": %s, "cpu_budget": -Infinity}' % huge)
    with open(os.path.join(logs, "cluster.status.json"), "w") as handle:
        handle.write('{"evals_per_s": -%s, "fill": 1e400, "moves_per_s": NaN, '
                     '"restarts": {"serve": %s, "w": true, "x": 2}}' % (huge, huge))

    async def body(client):
        answers = []
        for _ in range(2):
            response = await client.get("/api/snapshot")
            answers.append((response.status, await response.text()))
        return answers
    for status, text in with_client(Dashboard(run.root), body):
        assert status == 200
        snap = strict_json(text)["status"]
        assert snap["step"] == 300 and snap["games"] == 0 and snap["loss"] is None
        assert snap["eval_cpu"] is None and snap["eval_budget"] is None
        assert snap["evals_per_s"] is None and snap["fill"] is None
        assert snap["restarts"] == {"x": 2} and snap["endings"] is None


@pytest.mark.parametrize("loss", ["NaN", "Infinity", "-Infinity", "1e400", "1" + "0" * 400])
def test_a_loss_that_is_not_finite_reaches_the_page_as_null(run, loss):
    with open(os.path.join(run.logs, "train.status.json"), "w") as handle:
        handle.write('{"games": 5, "step": 3, "loss": %s}' % loss)

    async def body(client):
        response = await client.get("/api/snapshot")
        return response.status, await response.text()
    status, text = with_client(Dashboard(run.root), body)
    assert status == 200 and strict_json(text)["status"]["loss"] is None
    assert strict_json(text)["status"]["games"] == 5


def test_every_answer_is_written_finite():
    from dashboard.server import json_response

    response = json_response({"scoreLead": float("nan"), "x": [float("inf"), 1.5]})
    assert strict_json(response.body) == {"scoreLead": None, "x": [None, 1.5]}
