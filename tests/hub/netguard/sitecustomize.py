"""Loaded by CLI subprocesses the Hub tests start (PYTHONPATH): refuse any connection outside 127.0.0.1."""

import os
import socket

_LOG = os.environ.get("DSPARK_TEST_NET_LOG")
_ALLOWED = ("127.0.0.1", "::1", "localhost")


def _check(address):
    host = address[0] if isinstance(address, tuple) else None
    if host is not None and host not in _ALLOWED:
        if _LOG:
            with open(_LOG, "a") as log:
                log.write(f"{host}\n")
        raise ConnectionRefusedError(f"test network guard: connection to {host} refused")


_connect, _connect_ex, _create = socket.socket.connect, socket.socket.connect_ex, socket.create_connection


def _guarded_connect(self, address):
    if self.family in (socket.AF_INET, socket.AF_INET6):
        _check(address)
    return _connect(self, address)


def _guarded_connect_ex(self, address):
    if self.family in (socket.AF_INET, socket.AF_INET6):
        _check(address)
    return _connect_ex(self, address)


def _guarded_create(address, *args, **kwargs):
    _check(address)
    return _create(address, *args, **kwargs)


socket.socket.connect = _guarded_connect
socket.socket.connect_ex = _guarded_connect_ex
socket.create_connection = _guarded_create
