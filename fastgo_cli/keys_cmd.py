"""`fastgo keys new NAME [-o/--out D]`: a CURVE key pair for an endpoint or a client on another
host. Writes D/NAME.key (the public key: hand it out) and D/NAME.key_secret (mode 0600: keep it
on its host); never overwrites. The config names them: a server's or recorder's
curve_secret_key_file and curve_allowed, a client's curve_key_file and *_public_key."""


def parents():
    from fastgo_cli.parser import out_options
    return (out_options(default=".", metavar="DIR",
                        help="folder for NAME.key and NAME.key_secret (made, mode 0700, if "
                             "missing)"),)


def add_arguments(parser):
    parser.add_argument("action", choices=["new"], help="new: write a key pair")
    parser.add_argument("name", help="the key pair's name (letters, digits, '_', '.', '-')")


def run(args) -> int:
    import os
    import sys

    from wire.keys import write_key_pair

    if os.path.exists(args.out) and not os.path.isdir(args.out):
        print(f"fastgo keys: --out {args.out}: not a folder", file=sys.stderr)
        return 2
    try:
        os.makedirs(args.out, mode=0o700, exist_ok=True)   # a new key folder is private
    except OSError as err:
        print(f"fastgo keys: --out {args.out}: {err.strerror or err}", file=sys.stderr)
        return 2
    try:
        public_path, secret_path = write_key_pair(args.out, args.name)
    except (ValueError, FileExistsError) as err:
        print(f"fastgo keys: {err}", file=sys.stderr)
        return 2
    except OSError as err:
        print(f"fastgo keys: {args.out}: {err.strerror or err}", file=sys.stderr)
        return 2
    with open(public_path) as handle:
        public = [line.split('"')[1] for line in handle if "public-key" in line][0]
    print(f"public key {public}\n  {public_path} (give it to the peers that must allow this one)\n"
          f"  {secret_path} (secret, mode 0600: keep it on this host)")
    return 0
