"""Games against a checkpoint through the dashboard's endpoints, with the real engines
(`fastgo gtp` and `fastgo analysis` as children): the reply and the overlay, illegal and
off-board moves refused with the game unchanged, undo, the SGF, the bound on open games, White
for the human (the network opens); the run directory unchanged."""
import asyncio
import hashlib
import os

import pytest

from dashboard.server import Dashboard, ServerLimits


def digest(root):
    out = []
    for folder, _, files in os.walk(root):
        for name in sorted(files):
            with open(os.path.join(folder, name), "rb") as handle:
                out.append((name, hashlib.sha1(handle.read()).hexdigest()))
    return sorted(out)


@pytest.mark.slow
def test_a_game_against_a_checkpoint(tmp_path, dashboard_run):
    from aiohttp.test_utils import TestClient, TestServer

    run = dashboard_run(tmp_path / "run")
    before = digest(run.root)
    dashboard = Dashboard(run.root, limits=ServerLimits(sessions=1))

    async def main():
        async with TestClient(TestServer(dashboard.app())) as client:
            async def call(method, path, body=None):
                response = await client.request(method, path, json=body)
                return response.status, await response.json()

            status, game = await call("POST", "/api/play",
                                      {"checkpoint": "ckpt-000000200.ckpt", "visits": 8})
            assert status == 200 and game["moves"] == [] and game["to_move"] == "B"
            assert len(game["analysis"]["ownership"]) == 81
            assert len(game["analysis"]["policy"]) == 82 and game["analysis"]["moves"]
            gid = game["id"]
            status, refused = await call("POST", "/api/play",
                                         {"checkpoint": "ckpt-000000100.ckpt"})
            assert status == 503 and "open already" in refused["error"]

            status, game = await call("POST", f"/api/play/{gid}/move", {"move": "E5"})
            assert status == 200 and len(game["moves"]) == 2 and game["moves"][0] == 40
            assert game["board"][40] == "B" and game["board"].count("W") == 1
            reply = game["moves"][1]
            board = game["board"]
            status, err = await call("POST", f"/api/play/{gid}/move", {"move": "E5"})
            assert status == 409 and "occupied" in err["error"]
            status, err = await call("POST", f"/api/play/{gid}/move", {"move": "K10"})
            assert status == 400 and "off" in err["error"]
            status, same = await call("GET", f"/api/play/{gid}")
            assert same["board"] == board and len(same["moves"]) == 2

            response = await client.get(f"/api/play/{gid}/sgf")
            sgf = await response.text()
            assert ";B[ee]" in sgf and "SZ[9]" in sgf and "attachment" in \
                response.headers["Content-Disposition"]
            letters = "abcdefghi"
            expected = ";W[]" if reply == -1 else f";W[{letters[reply % 9]}{letters[reply // 9]}]"
            assert expected in sgf

            status, game = await call("POST", f"/api/play/{gid}/undo")
            assert status == 200 and game["moves"] == [] and game["board"] == "." * 81
            status, _ = await call("DELETE", f"/api/play/{gid}")
            assert status == 200

            status, game = await call("POST", "/api/play", {"checkpoint": "ckpt-000000100.ckpt",
                                                            "color": "W", "seconds": 0.2})
            assert status == 200 and game["human"] == "W" and len(game["moves"]) == 1
            assert game["to_move"] == "W"
            await call("DELETE", f"/api/play/{game['id']}")
    asyncio.run(main())
    assert digest(run.root) == before
