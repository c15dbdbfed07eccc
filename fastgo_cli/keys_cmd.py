"""`fastgo keys new NAME [--dir D]`: a CURVE key pair for an endpoint or a client on another
host. Writes D/NAME.key (the public key: hand it out) and D/NAME.key_secret (mode 0600: keep it
on its host); never overwrites. The config names them: a server's or recorder's
curve_secret_key_file and curve_allowed, a client's curve_key_file and *_public_key."""


def add_arguments(parser):
    parser.add_argument("action", choices=["new"], help="new: write a key pair")
    parser.add_argument("name", help="the key pair's name (letters, digits, '_', '.', '-')")
    parser.add_argument("--dir", default=".",
                        help="folder for NAME.key and NAME.key_secret (made, mode 0700, if missing)")


def run(args) -> int:
    import os
    import sys

    from inference_server.keys import write_key_pair

    if os.path.exists(args.dir) and not os.path.isdir(args.dir):
        print(f"fastgo keys: --dir {args.dir}: not a folder", file=sys.stderr)
        return 2
    try:
        os.makedirs(args.dir, mode=0o700, exist_ok=True)   # a new key folder is private
    except OSError as err:
        print(f"fastgo keys: --dir {args.dir}: {err.strerror or err}", file=sys.stderr)
        return 2
    try:
        public_path, secret_path = write_key_pair(args.dir, args.name)
    except (ValueError, FileExistsError) as err:
        print(f"fastgo keys: {err}", file=sys.stderr)
        return 2
    except OSError as err:
        print(f"fastgo keys: {args.dir}: {err.strerror or err}", file=sys.stderr)
        return 2
    with open(public_path) as handle:
        public = [line.split('"')[1] for line in handle if "public-key" in line][0]
    print(f"public key {public}\n  {public_path} (give it to the peers that must allow this one)\n"
          f"  {secret_path} (secret, mode 0600: keep it on this host)")
    return 0
