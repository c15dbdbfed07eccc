"""`fastgo play --model CKPT [--color black|white] [--visits V]`: a game against the network in
the terminal, for users without a GUI. The board is drawn in ASCII with GTP coordinates; moves
are typed as GTP vertices (D4), or `pass`, `undo` (takes back your last move and the reply),
`resign`, `quit`."""
import sys

from fastgo.variants import Device, Use

LEAVES = 8                 # leaves evaluated together a search step, as `fastgo gtp --model`


def parents():
    from fastgo_cli.parser import seed_options
    return (seed_options(help="seed of the search"),)


def add_arguments(parser):
    from fastgo_cli.parser import komi

    parser.add_argument("--model", required=True, metavar="CKPT", help="network checkpoint to play")
    parser.add_argument("--color", default="black", choices=["black", "white"], help="your colour")
    parser.add_argument("--visits", type=int, default=200, help="the network's visits per move")
    parser.add_argument("--komi", type=komi, default=7.5, help="komi (White's compensation)")
    parser.add_argument("--device", default=Device.AUTO, choices=Device.choices(),
                        help="where the network runs (auto: CUDA when there is one)")


def render(game) -> str:
    """The position with GTP coordinates: X Black, O White, the last move in parentheses."""
    from fastgo.board import BLACK, WHITE
    from fastgo.coords import GTP_COLUMNS

    board = game.board
    n = board.size
    stones = board.stones().reshape(-1)
    last = game.moves[-1][1] if game.moves else None
    header = "    " + " ".join(GTP_COLUMNS[:n])
    lines = [header]
    for row in range(n):
        cells = []
        for col in range(n):
            move = row * n + col
            mark = {BLACK: "X", WHITE: "O"}.get(int(stones[move]), ".")
            cells.append(mark)
        text = " ".join(cells)
        if last is not None and last < n * n and last // n == row:
            col = last % n
            text = text[:2 * col] + mark_last(text[2 * col]) + text[2 * col + 1:]
        lines.append(f"{n - row:>3} {text} {n - row}")
    lines.append(header)
    captures = board.captures
    lines.append(f"captures: X {captures[0]}  O {captures[1]}   komi {board.komi:g}")
    return "\n".join(lines)


def mark_last(mark):
    return mark.lower() if mark in "XO" else mark


def run(args) -> int:
    from fastgo.board import BLACK
    from fastgo.coords import from_gtp, to_gtp
    from fastgo.game import RESIGN, Game
    from fastgo_cli.player_flags import settings_from_flags
    from network.loading import set_torch_threads
    from play.network_player import load_player_network, make_search_player

    try:
        if args.visits < 1:
            raise ValueError(f"--visits must be >= 1, got {args.visits}")
        # the network as `fastgo gtp --model` plays it: eight leaves a search step
        settings = settings_from_flags(args, leaves=LEAVES, capacity=LEAVES)
        network = load_player_network(args.model, Use.PLAY, settings, what="--model")
        set_torch_threads(settings.threads or None)
        player = make_search_player(network, settings, seed=args.seed)
    except ValueError as exc:
        print(f"fastgo play: {exc}", file=sys.stderr)
        return 2
    size = network.config.board_size
    game = Game(size, args.komi)
    human = BLACK if args.color == "black" else 3 - BLACK
    print(f"fastgo play: you are {'X (Black)' if human == BLACK else 'O (White)'} on {size}x{size}, "
          f"the network plays with {player.visits} visits. Type a vertex (e.g. "
          f"{to_gtp(size // 2 * size + size // 2, size)}), pass, undo, resign or quit.")
    while not game.is_over():
        print(render(game))
        if game.to_move != human:
            move = player.genmove(game)
            if move == RESIGN:
                game.resign(game.to_move)
                print("the network resigns")
                break
            game.play(int(move))
            print(f"network plays {to_gtp(int(move), size)}")
            continue
        try:
            line = input("your move> ").strip()
        except EOFError:
            print()
            return 0
        word = line.lower()
        if word in ("quit", "exit"):
            return 0
        if word == "resign":
            game.resign(human)
            break
        if word == "undo":
            undone = 0
            while game.moves and (undone == 0 or game.to_move != human):
                game.undo()
                undone += 1
            player.reset()
            continue
        try:
            move = from_gtp(line, size)
        except ValueError as exc:
            print(f"? {exc}")
            continue
        if not game.is_legal(move):
            print(f"? illegal move {line}")
            continue
        game.play(move)
    print(render(game))
    print(f"result: {game.result_string()}")
    return 0
