"""KaTrain's own engine client (katrain.core.engine.KataGoEngine, the class behind its
analysis) analysing a game through a custom engine command, as a user sets it in KaTrain's
engine settings ("altcommand"). Run as a script: argv[1] the command line, argv[2] an SGF
file, argv[3] max visits; prints one JSON object: per node the analysis KaTrain keeps
(root info, candidate moves with KaTrain's own points lost, ownership size), the errors KaTrain
logged, and whether every node's analysis completed. Kept in a process of its own: Kivy sets
up logging and reads its environment at import."""
import json
import os
import sys
import time

os.environ.setdefault("KIVY_NO_ARGS", "1")
os.environ.setdefault("KIVY_NO_CONSOLELOG", "1")
os.environ.setdefault("KIVY_NO_FILELOG", "1")

from katrain.core.base_katrain import KaTrainBase  # noqa: E402
from katrain.core.constants import OUTPUT_ERROR  # noqa: E402
from katrain.core.engine import KataGoEngine  # noqa: E402
from katrain.core.game import Game, KaTrainSGF  # noqa: E402


class Client(KaTrainBase):
    def __init__(self):
        super().__init__(force_package_config=True, debug_level=0)
        self.errors = []

    def log(self, message, level=0):
        if level == OUTPUT_ERROR:
            self.errors.append(str(message)[:500])

    def __call__(self, *args, **kwargs):          # engine_recovery_popup and the like
        self.errors.append("popup: " + " ".join(str(a)[:200] for a in args))


def main(command, sgf_path, visits, timeout_s=240.0):
    katrain = Client()
    config = dict(katrain.config("engine"))
    config.update(backend="custom", altcommand=command, max_visits=int(visits),
                  fast_visits=int(visits), max_time=60.0, _enable_ownership=True)
    engine = KataGoEngine(katrain, config)
    with open(sgf_path) as f:
        root = KaTrainSGF.parse_sgf(f.read())
    game = Game(katrain, engine, move_tree=root)    # analyses every node on a thread
    nodes = list(game.root.nodes_in_tree)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and not all(n.analysis_complete for n in nodes):
        time.sleep(0.1)
    out = {"complete": all(n.analysis_complete for n in nodes), "errors": katrain.errors,
           "nodes": []}
    for node in nodes:
        analysis = node.analysis
        root_info = analysis.get("root") or {}
        candidates = node.candidate_moves if node.analysis_exists else []
        out["nodes"].append({
            "move": node.move.gtp() if node.move else None,
            "root": {k: root_info.get(k) for k in ("visits", "winrate", "scoreLead")},
            "score": node.score, "winrate": node.winrate,
            "ownership": len(node.ownership or []), "policy": len(node.policy or []),
            "candidates": [{k: c.get(k) for k in ("move", "visits", "winrate", "scoreLead",
                                                  "pointsLost", "order")}
                           for c in candidates[:5]],
        })
    engine.shutdown(finish=None)          # no join: the shell of a custom command may outlive terminate()
    print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3])
