"""http(s) references against a real local HTTP server, and the SSRF address policy."""

from __future__ import annotations

import hashlib
import ipaddress
import os
import socket
import threading
import time
from collections import Counter
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote

import numpy as np
import pytest
from sklearn.datasets import dump_svmlight_file

from tests.data.helpers import MATRIX, PATH, as_dense, isolated_data_cache
from worker.data.read import LoadStats, read_examples, read_matrix
from worker.data.sources.address_policy import internal_reason, is_allowed
from worker.errors import DataError
from worker.settings import DataSettings

pytestmark = pytest.mark.usefixtures(isolated_data_cache.__name__)

#: The longest any handler of the test server waits, so the server always stops quickly.
SLOW_RESPONSE_S = 1.5


class QuietServer(ThreadingHTTPServer):
    """A server that does not print the broken pipes of clients that gave up on purpose."""

    daemon_threads = True

    def handle_error(self, request, client_address) -> None:
        pass


class Server:
    """A threaded HTTP server on 127.0.0.1 serving a directory, counting requests by path."""

    def __init__(self, directory: Path):
        self.directory = directory
        self.requests: Counter[str] = Counter()
        handler = self._handler()
        self.httpd = QuietServer(("127.0.0.1", 0), handler)
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.05,),
                                       daemon=True)
        self.thread.start()

    def url(self, path: str, host: str = "127.0.0.1") -> str:
        return f"http://{host}:{self.port}/{path}"

    def _handler(self) -> type[SimpleHTTPRequestHandler]:
        server = self

        class Handler(SimpleHTTPRequestHandler):
            def __init__(self, *args, **kwargs):
                super().__init__(*args, directory=str(server.directory), **kwargs)

            def log_message(self, *args) -> None:
                pass

            def _special(self) -> bool:
                server.requests[f"{self.command} {self.path}"] += 1
                if self.path.startswith("/redirect/"):
                    self.send_response(302)
                    self.send_header("Location", unquote(self.path[len("/redirect/"):]))
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return True
                if self.path == "/slow.npy":
                    time.sleep(SLOW_RESPONSE_S)
                if self.path == "/endless.npy":
                    self.send_response(200)
                    self.end_headers()
                    for _ in range(64):
                        self.wfile.write(b"\0" * 65536)
                    return True
                return False

            def do_GET(self) -> None:
                if not self._special():
                    super().do_GET()

            def do_HEAD(self) -> None:
                if not self._special():
                    super().do_HEAD()

        return Handler

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)


@pytest.fixture
def server(tmp_path):
    """A local HTTP server on a free port, serving ``tmp_path / "www"``."""
    root = tmp_path / "www"
    root.mkdir()
    np.save(root / "x.npy", np.arange(6.0).reshape(2, 3))
    np.save(root / "slow.npy", np.eye(2))
    running = Server(root)
    yield running
    running.stop()


def settings_for(tmp_path: Path, *allowed: str, **changes) -> DataSettings:
    return DataSettings(uri_allow_hosts=list(allowed), data_cache_dir=tmp_path / "cache",
                        **changes)


def fetch(uri: str, settings: DataSettings, stats: LoadStats | None = None, **ref):
    return read_matrix(MATRIX.validate_python({"uri": uri} | ref), PATH, roots=[],
                       settings=settings, stats=stats)


def refusal(uri: str, settings: DataSettings, **ref) -> str:
    with pytest.raises(DataError) as info:
        fetch(uri, settings, **ref)
    message = str(info.value)
    assert message.startswith(PATH + ": ")
    return message


def test_allow_listed_host_is_fetched(server, tmp_path):
    settings = settings_for(tmp_path, f"127.0.0.1:{server.port}")
    np.testing.assert_array_equal(fetch(server.url("x.npy"), settings),
                                  np.arange(6.0).reshape(2, 3))
    by_name = settings_for(tmp_path, "LOCALHOST")  # any port; names go through the resolver
    np.testing.assert_array_equal(fetch(server.url("x.npy", "localhost"), by_name),
                                  np.arange(6.0).reshape(2, 3))


def test_svmlight_labels_over_http(server, tmp_path):
    features = np.array([[0.0, 1.5], [2.0, 0.0], [0.0, 0.0]])
    dump_svmlight_file(features, [1, -1, 1], str(server.directory / "train.svm"))
    settings = settings_for(tmp_path, f"127.0.0.1:{server.port}")
    matrix, labels = read_examples(MATRIX.validate_python({"uri": server.url("train.svm")}),
                                   None, "objective.data", roots=[], settings=settings)
    np.testing.assert_array_equal(as_dense(matrix), features)
    np.testing.assert_array_equal(labels, [1, -1, 1])


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "[::1]", "127.1"])
def test_unlisted_loopback_refused_before_connecting(server, tmp_path, host):
    message = refusal(server.url("x.npy", host), settings_for(tmp_path, "example.com"))
    assert "is a loopback address, which data URIs may not reach; an operator can allow it " \
           f"by adding {host}:{server.port} to LIGHTTOUCH_URI_ALLOW_HOSTS" in message
    assert not server.requests


def test_allow_list_port_must_match(server, tmp_path):
    message = refusal(server.url("x.npy"), settings_for(tmp_path, "127.0.0.1:1"))
    assert "loopback" in message and not server.requests


@pytest.mark.parametrize(("target", "reason"), [
    ("http://127.0.0.2:{port}/x.npy", "127.0.0.2 is a loopback address"),
    ("http://169.254.169.254/latest/meta-data/", "link-local (cloud metadata)"),
    ("http://[::ffff:10.0.0.1]/x.npy", "is a private address"),
    ("http://localhost:{port}/x.npy", "is a loopback address"),
    ("ftp://example.com/x.npy", "scheme 'ftp' is not http or https"),
])
def test_redirect_to_refused_address_is_refused(server, tmp_path, target, reason):
    settings = settings_for(tmp_path, f"127.0.0.1:{server.port}")
    location = target.format(port=server.port)
    message = refusal(server.url(f"redirect/{location}"), settings, format="npy")
    assert "refused: redirect to " in message and reason in message
    assert all(" /redirect/" in request for request in server.requests)  # target never asked


def test_redirect_to_allowed_address_is_followed(server, tmp_path):
    settings = settings_for(tmp_path, f"127.0.0.1:{server.port}")
    np.testing.assert_array_equal(fetch(server.url(f"redirect/{server.url('x.npy')}"),
                                        settings, format="npy"), np.arange(6.0).reshape(2, 3))


def test_http_failures_are_said_plainly(server, tmp_path):
    settings = settings_for(tmp_path, f"127.0.0.1:{server.port}")
    assert "the server answered HTTP 404 File not found; check the URL" in \
        refusal(server.url("missing.npy"), settings)
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        closed = unused.getsockname()[1]
    assert f"cannot reach host 127.0.0.1 port {closed}" in \
        refusal(f"http://127.0.0.1:{closed}/x.npy", settings_for(tmp_path, "127.0.0.1"))
    assert "credentials in the URL are refused" in \
        refusal(f"http://user:pw@127.0.0.1:{server.port}/x.npy", settings)
    assert "cannot resolve host 'no-such-host.invalid'" in \
        refusal("http://no-such-host.invalid/x.npy", settings)


def test_byte_cap_and_time_limit(server, tmp_path):
    small = settings_for(tmp_path, f"127.0.0.1:{server.port}", max_data_bytes=100)
    assert "holds 176 bytes, over the limit of 100 bytes; use a smaller file, or ask the " \
           "operator to raise LIGHTTOUCH_MAX_DATA_BYTES" in refusal(server.url("x.npy"), small)
    assert "holds more, over the limit of 100 bytes" in \
        refusal(server.url("endless.npy"), small)
    hasty = settings_for(tmp_path, f"127.0.0.1:{server.port}", fetch_timeout_s=0.3)
    started = time.perf_counter()
    assert "no complete answer within 0.3 s (LIGHTTOUCH_FETCH_TIMEOUT_S)" in \
        refusal(server.url("slow.npy"), hasty)
    assert time.perf_counter() - started < SLOW_RESPONSE_S


def test_second_load_comes_from_the_cache(server, tmp_path):
    settings = settings_for(tmp_path, f"127.0.0.1:{server.port}")
    stats = LoadStats()
    for _ in range(2):
        fetch(server.url("x.npy"), settings, stats)
    assert server.requests["GET /x.npy"] == 1 and server.requests["HEAD /x.npy"] == 2
    assert stats.references == 2 and stats.cache_hits == 1 and stats.bytes_read == 176
    (server.directory / "x.npy").write_bytes((server.directory / "slow.npy").read_bytes())
    future = time.time() + 5  # Last-Modified has one-second resolution
    os.utime(server.directory / "x.npy", (future, future))
    np.testing.assert_array_equal(fetch(server.url("x.npy"), settings, stats), np.eye(2))
    assert stats.cache_hits == 1 and server.requests["GET /x.npy"] == 2


def test_sha256_over_http(server, tmp_path):
    settings = settings_for(tmp_path, f"127.0.0.1:{server.port}")
    digest = hashlib.sha256((server.directory / "x.npy").read_bytes()).hexdigest()
    np.testing.assert_array_equal(fetch(server.url("x.npy"), settings, sha256=digest),
                                  np.arange(6.0).reshape(2, 3))
    assert "sha256 mismatch" in refusal(server.url("x.npy"), settings, sha256="0" * 64)


# -- the address policy --------------------------------------------------------------------

@pytest.mark.parametrize(("address", "reason"), [
    ("127.0.0.1", "loopback"), ("::1", "loopback"), ("10.1.2.3", "private"),
    ("172.16.0.1", "private"), ("192.168.1.1", "private"), ("fd00:ec2::254", "private"),
    ("169.254.169.254", "link-local (cloud metadata)"), ("fe80::1", "link-local (cloud metadata)"),
    ("100.100.100.200", "non-public"), ("0.0.0.0", "private"), ("224.0.0.1", "multicast"),
    ("::ffff:127.0.0.1", "loopback"), ("2002:a00:1::", "private"), ("64:ff9b::a9fe:a9fe",
                                                                     "link-local (cloud metadata)"),
    ("240.0.0.1", "private"), ("8.8.8.8", None), ("2606:4700:4700::1111", None),
])
def test_internal_addresses_are_named(address, reason):
    assert internal_reason(ipaddress.ip_address(address)) == reason


def test_allow_list_entries():
    allowed = ["data.internal", "10.0.0.5:8080", "[::1]:9000", "fd00::1"]
    assert is_allowed("DATA.internal", 443, allowed)
    assert is_allowed("10.0.0.5", 8080, allowed) and not is_allowed("10.0.0.5", 80, allowed)
    assert is_allowed("::1", 9000, allowed) and not is_allowed("::1", 9001, allowed)
    assert is_allowed("[fd00::1]", 1, allowed) and not is_allowed("evil.com", 80, allowed)


def test_allow_hosts_from_the_environment(monkeypatch):
    monkeypatch.setenv("LIGHTTOUCH_URI_ALLOW_HOSTS", " Data.Internal:8080, ,10.0.0.5 ")
    assert DataSettings().uri_allow_hosts == ["data.internal:8080", "10.0.0.5"]
