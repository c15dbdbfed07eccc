"""`fastgo serve --config FILE [...]`: run the batching inference server on its own."""


def add_arguments(parser):
    from inference_server.server import add_arguments as server_arguments
    server_arguments(parser)


def run(args) -> int:
    from inference_server.server import run as serve
    return serve(args)
