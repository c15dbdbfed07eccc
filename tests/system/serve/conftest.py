"""Fixtures for the server's tests: a server config written from its [model] and [server]
keys."""
import pytest


@pytest.fixture(scope="session")
def write_config():
    """write_config(path, model, server) -> str(path): a TOML file with [model] and [server]
    tables from flat dicts (supervision.role_process.write_toml)."""
    from supervision.role_process import write_toml

    def write(path, model: dict, server: dict) -> str:
        return write_toml(path, {"model": model, "server": server})
    return write
