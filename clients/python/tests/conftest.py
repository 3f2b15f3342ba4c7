"""Real Greenlight servers, started from this checkout's build, and ways to wait for events.

Tests wait for something to happen (a log line, a retry, a review appearing), never for a
fixed time, so they hold on a busy machine.
"""
import os
import signal
import socket
import subprocess
import threading
import time
import uuid
from concurrent.futures import Future
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List

import pytest

from greenlight_client import Client

REPOSITORY = Path(__file__).resolve().parents[3]

# Generous caps for events that normally take well under a second; reaching one fails the test.
EVENT_TIMEOUT_SECONDS = 60.0


def server_environment() -> Dict[str, str]:
    """The tests' settings come from the file alone; only a database chosen for the run is kept."""
    return {name: value for name, value in os.environ.items() if not name.startswith("GREENLIGHT_") or name == "GREENLIGHT_DATABASE_URL"}


class Server:
    """``greenlight start --api-only`` in ``directory``, whose wait limit is 1 s so that the
    server's own timeouts (408) come quickly."""

    def __init__(self, directory: Path, port: int) -> None:
        self.port = port
        self.url = f"http://127.0.0.1:{port}"
        self.output: List[str] = []
        config = directory / "greenlight.yaml"
        config.write_text(f"data_dir: ./data\napi_port: {port}\nblocking_timeout_seconds: 1\n")
        environment = server_environment()
        self.process = subprocess.Popen(
            ["node", str(REPOSITORY / "bin" / "greenlight.js"), "start", "--api-only", "--config", str(config)],
            cwd=directory,
            env=environment,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        self._listening = False
        self._settled = threading.Event()
        self._reader = threading.Thread(target=self._read_output, daemon=True)
        self._reader.start()
        if not self._settled.wait(EVENT_TIMEOUT_SECONDS) or not self._listening:
            self.stop()
            raise RuntimeError("Greenlight did not start:\n" + "".join(self.output))

    def _read_output(self) -> None:
        assert self.process.stdout is not None
        # Read to the end, so the server never blocks on a full pipe.
        for line in self.process.stdout:
            self.output.append(line)
            if "listening on" in line:
                self._listening = True
                self._settled.set()
        self._settled.set()

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=EVENT_TIMEOUT_SECONDS)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._reader.join(timeout=EVENT_TIMEOUT_SECONDS)


class RetryLog:
    """An ``on_retry`` callback that lets a test wait until the client has reached a state."""

    def __init__(self) -> None:
        self.reasons: List[str] = []
        self._changed = threading.Condition()

    def __call__(self, reason: str, attempt: int) -> None:
        with self._changed:
            self.reasons.append(reason)
            self._changed.notify_all()

    def wait_until(self, condition: Callable[[List[str]], bool], description: str) -> None:
        with self._changed:
            if not self._changed.wait_for(lambda: condition(self.reasons), EVENT_TIMEOUT_SECONDS):
                raise AssertionError(f"no {description} within {EVENT_TIMEOUT_SECONDS} s; retries seen: {self.reasons}")

    def wait_for(self, reason: str, count: int = 1) -> None:
        self.wait_until(lambda reasons: reasons.count(reason) >= count, f"{count} {reason!r} retries")


def find_unused_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    started = Server(tmp_path_factory.mktemp("greenlight"), find_unused_port())
    yield started
    started.stop()


@pytest.fixture
def start_server() -> Iterator[Callable[[Path, int], Server]]:
    """Starts servers of the test's own (to stop, restart or start late); all stopped at the end."""
    started: List[Server] = []

    def start(directory: Path, port: int) -> Server:
        started.append(Server(directory, port))
        return started[-1]

    yield start
    for each in started:
        each.stop()


@pytest.fixture
def unused_port() -> int:
    return find_unused_port()


@pytest.fixture
def client(server: Server) -> Client:
    return Client(server.url)


@pytest.fixture
def task_type() -> str:
    """A task type no other test uses, to count this test's reviews with ``?task_type=``."""
    return f"test-{uuid.uuid4().hex}"


@pytest.fixture
def retry_log() -> RetryLog:
    return RetryLog()


def run_in_background(work: Callable[[], Any]) -> "Future[Any]":
    future: "Future[Any]" = Future()

    def run() -> None:
        try:
            future.set_result(work())
        except BaseException as error:  # handed to the test, which re-raises it from result()
            future.set_exception(error)

    # A daemon thread: a client still waiting after a failed test must not keep pytest from exiting.
    threading.Thread(target=run, daemon=True).start()
    return future


@pytest.fixture
def in_background() -> Callable[[Callable[[], Any]], "Future[Any]"]:
    return run_in_background


def await_pending(client: Client, count: int = 1, **filters: Any) -> List[Dict[str, Any]]:
    """The pending reviews matching ``filters``, once there are ``count`` of them."""
    give_up = time.monotonic() + EVENT_TIMEOUT_SECONDS
    while True:
        found = client.list_reviews(status="pending", **filters)
        if found["total"] >= count:
            return found["reviews"]
        if time.monotonic() > give_up:
            raise AssertionError(f"{count} pending reviews matching {filters} did not appear within {EVENT_TIMEOUT_SECONDS} s")
        time.sleep(0.05)


@pytest.fixture
def pending_reviews() -> Callable[..., List[Dict[str, Any]]]:
    return await_pending


def count_reviews(client: Client, task_type: str) -> int:
    return client.list_reviews(task_type=task_type)["total"]


@pytest.fixture
def review_count() -> Callable[[Client, str], int]:
    return count_reviews
