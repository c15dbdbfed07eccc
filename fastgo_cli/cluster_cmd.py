"""`fastgo cluster --config C [--duration 15m] [--run-dir runs/NAME] [--launcher local|ray]`: the
whole loop (server, trainer, W self-play workers, evaluator) supervised from one config. Parses
and checks the options, picks the launcher and hands over to supervision.supervisor.supervise."""
from __future__ import annotations

import os
import re
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from supervision.local_launcher import LocalCluster
    from supervision.ray_launcher import RayCluster

ADDRESS = re.compile(r"auto|(ray://)?[A-Za-z0-9_.:\[\]-]{1,260}")


def parents():
    from fastgo_cli.parser import config_options, duration_options, run_dir_options
    return (config_options(required=False, default="quickstart"),
            run_dir_options(required=False, help="the run directory (default: runs/<config name>)"),
            duration_options(help="stop by itself after this long: 90 (seconds), 90s, 15m, 2h "
                                  "(default: run until Ctrl-C)"))


def add_arguments(parser):
    parser.add_argument("--workers", type=int, help="self-play workers (default: cluster.workers)")
    parser.add_argument("--no-evaluate", action="store_true", help="run without the evaluator")
    parser.add_argument("--launcher", choices=["local", "ray"],
                        help="how the roles are launched: local = child processes here; ray = "
                             "actors on a Ray cluster (default: cluster.launcher)")
    parser.add_argument("--address", help="ray: the Ray cluster to join (host:port, or auto); "
                                          "default: start a Ray instance on this machine")
    parser.add_argument("--dashboard", action="store_true",
                        help="start `fastgo dashboard` on the run directory beside the run "
                             "(loopback) and print its address; stopped with the run")
    parser.add_argument("--dashboard-port", type=int, default=8765, metavar="N",
                        help="its port (0: any free one)")


def run(args) -> int:
    from rundata.config import ConfigError, check_setting_flag, load_config
    from rundata.rundir import open_run_dir
    from supervision.status import clock
    from supervision.supervisor import cluster_log, supervise

    try:
        config = load_config(args.config, overrides=args.overrides)
        duration = args.seconds
        check_setting_flag("--workers", args.workers, "cluster.workers")
        workers = config.cluster.workers if args.workers is None else args.workers
        launcher = args.launcher or config.cluster.launcher
        if args.address is not None and launcher != "ray":
            raise ConfigError("--address: only with --launcher ray (or cluster.launcher = \"ray\")")
        if args.address is not None and not ADDRESS.fullmatch(args.address):
            raise ConfigError(f"--address {args.address[:60]!r}: expected auto or HOST:PORT")
        name = os.path.splitext(os.path.basename(args.config))[0]
        run_dir = open_run_dir(args.run_dir or os.path.join("runs", name))
    except (ConfigError, ValueError, OSError) as err:
        print(f"fastgo cluster: {err}", file=sys.stderr)
        return 2
    tty = sys.stdout.isatty()
    log = cluster_log(tty)
    evaluate = config.cluster.evaluate and not args.no_evaluate
    config_path = os.path.abspath(args.config)
    cluster: RayCluster | LocalCluster
    if launcher == "ray":
        from supervision.ray_launcher import RayCluster, RayUnavailable
        try:
            cluster = RayCluster(config, config_path, run_dir, workers, evaluate, log,
                                 address=args.address, overrides=args.overrides)
        except RayUnavailable as err:
            print(f"fastgo cluster: {err}", file=sys.stderr)
            return 2
    else:
        from supervision.local_launcher import LocalCluster
        cluster = LocalCluster(config, config_path, run_dir, workers, evaluate, log,
                               overrides=args.overrides)
    print(f"fastgo cluster: {config.model.name} {config.model.board_size}x{config.model.board_size}, "
          f"{workers} worker(s), run directory {run_dir.root}"
          + (f", {cluster.where}" if launcher == "ray" else "")
          + (f", stopping after {clock(duration)}" if duration else ", Ctrl-C stops it"), flush=True)
    dashboard = _start_dashboard(run_dir, args.dashboard_port, log) if args.dashboard else None
    try:
        return supervise(cluster, duration=duration, tty=tty,
                         status_every_s=1.0 if tty else config.cluster.status_interval_s)
    finally:
        if dashboard is not None:
            dashboard.stop()


DASHBOARD_READY = "fastgo dashboard: "


def _start_dashboard(run_dir, port, log):
    """`fastgo dashboard RUN --port PORT` as a child (its output in logs/dashboard.log), once
    it listens; its address logged. None (and why, logged) when it cannot start: the run goes
    on without it."""
    from supervision.role_process import RoleProcess, RoleStartError

    child = RoleProcess(["dashboard", run_dir.root, "--port", str(int(port))],
                        run_dir.log("dashboard"), ready=DASHBOARD_READY, ready_timeout_s=60.0,
                        die_with_parent=True, name="dashboard")
    try:
        child.start()
    except (RoleStartError, OSError) as err:
        log(f"the dashboard did not start ({err}); the run goes on without it")
        return None
    log(f"dashboard at {child.endpoint.split()[0]}")
    return child
