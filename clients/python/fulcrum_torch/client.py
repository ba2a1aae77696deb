"""A blocking client of fulcrumd's WebSocket protocol (docs/protocol.md), version 3.

websockets 10 (Debian 12) has only an asyncio API: the client runs its own event loop on a
thread of its own, and each call waits for its reply, so training code stays synchronous.
That thread also sends a heartbeat every second, whatever the training code is doing (a
long evaluation, an all-reduce that waits for a peer): fulcrumd loses a rank only when its
process has been silent for the job's worker timeout (stopped, hung or cut off).
"""

import asyncio
import itertools
import json
import os
import re
import ssl
import threading
from typing import Any, Dict, List, Optional

import websockets

PROTOCOL_VERSION = 3
HEARTBEAT_S = 1.0


class FulcrumError(RuntimeError):
    """A request fulcrumd refused: its stable code, the message and the field it names."""

    def __init__(self, code: str, message: str, field: str = ""):
        super().__init__(f"{code}: {message}" + (f" (field {field})" if field else ""))
        self.code = code
        self.message = message
        self.field = field


def read_token_file(path: str, role: str = "operator") -> str:
    """The token of `role` in a fulcrumd token file (lines 'ROLE [NAME] TOKEN')."""
    bare = None
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            words = line.split("#", 1)[0].split()
            if not words:
                continue
            if len(words) == 1:
                bare = bare or words[0]
            elif words[0] == role:
                return words[-1]
            elif words[0] not in ("operator", "viewer", "worker") or len(words) > 3:
                raise ValueError(f"{path}: line {number}: expected 'ROLE [NAME] TOKEN'")
    if bare:
        return bare
    raise ValueError(f"{path}: no {role} token")


SERVER_FORMS = "ws://HOST:PORT, wss://HOST:PORT (TLS) or HOST:PORT"
DEFAULT_SERVER = "ws://127.0.0.1:7480"
# The host as the C++ parser (protocol/server_address.cpp) takes it: bracketed (IPv6) or not,
# never a path, query, user, blank or stray bracket in it.
_SERVER = re.compile(r"^(?:(wss?)://)?(\[[^\]/?#@\[ \t]+\]|[^:/?#@\[\] \t]+)(?::(\d+))?/?$")


def server_url(server: Optional[str] = None, field: str = "server") -> str:
    """fulcrumd's URL from the address as every Fulcrum program takes it: ws://HOST:PORT,
    wss://HOST:PORT or HOST:PORT (a plain WebSocket), the port 7480 when left out. None: the
    FULCRUM_SERVER variable, else ws://127.0.0.1:7480. A bad one is refused naming the forms."""
    if server is None:
        server, field = os.environ.get("FULCRUM_SERVER") or DEFAULT_SERVER, "FULCRUM_SERVER"
    match = _SERVER.match(server.strip())
    port = int(match.group(3)) if match and match.group(3) else 7480
    if not match or not 1 <= port <= 65535:
        raise ValueError(f"{field}: expected {SERVER_FORMS}, e.g. {DEFAULT_SERVER}; got {server!r}")
    return f"{match.group(1) or 'ws'}://{match.group(2)}:{port}"


class FulcrumClient:
    """One connection to fulcrumd. `server` is fulcrumd's address in any form server_url takes
    (ws://HOST:PORT, wss://HOST:PORT or HOST:PORT); None: $FULCRUM_SERVER, else the default."""

    def __init__(self, server: Optional[str], token: str, *, ca_file: Optional[str] = None,
                 name: str = "fulcrum_torch", timeout_s: float = 30.0):
        server = server_url(server)  # before any thread starts: a bad address leaves nothing behind
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="fulcrum-client", daemon=True)
        self._thread.start()
        self._heartbeat = None
        self._evaluating = 0  # evaluations announced and not yet ended: said in every heartbeat
        self._collective = False  # in the framework's all-reduce: said in every heartbeat
        self._ws = None
        self._ids = itertools.count(1)
        self._timeout_s = timeout_s
        self.server = server
        try:  # whatever fails here, no thread or socket is left behind to heartbeat on
            self._connect(token, ca_file, name, timeout_s)
        except BaseException:
            self.close()
            raise

    def _connect(self, token: str, ca_file: Optional[str], name: str, timeout_s: float) -> None:
        server = self.server
        context = ssl.create_default_context(cafile=ca_file) if server.startswith("wss://") else None
        try:
            async def open_connection():  # made inside the loop: websockets 10 binds the running one
                return await websockets.connect(
                    server, extra_headers={"Authorization": f"Bearer {token}"}, ssl=context,
                    max_size=1 << 20, open_timeout=timeout_s, ping_interval=None)
            self._ws = self._run(open_connection())
        except (OSError, asyncio.TimeoutError, websockets.exceptions.InvalidHandshake) as e:
            raise ConnectionError(f"cannot reach fulcrumd at {server}: {e}") from e
        welcome = self._receive(timeout_s, send={"type": "hello", "version": PROTOCOL_VERSION, "client": name})
        if welcome.get("type") != "welcome":
            error = welcome.get("error", {})
            raise FulcrumError(error.get("code", "no-welcome"), error.get("message", str(welcome)))
        self.role = welcome.get("role")
        self._heartbeat = asyncio.run_coroutine_threadsafe(self._beat(), self._loop)

    def _run(self, coroutine):
        future = asyncio.run_coroutine_threadsafe(coroutine, self._loop)
        try:
            return future.result()
        except BaseException:  # interrupted (Ctrl-C): the call must not go on receiving behind us
            future.cancel()
            raise

    def _heartbeat_frame(self) -> str:
        frame: Dict[str, Any] = {"type": "heartbeat"}
        if self._evaluating:
            frame["evaluating"] = True
        if self._collective:
            frame["collective"] = True
        return json.dumps(frame)

    async def _beat(self):
        try:
            while True:
                await self._ws.send(self._heartbeat_frame())
                await asyncio.sleep(HEARTBEAT_S)
        except websockets.exceptions.ConnectionClosed:
            return  # the calls say why, when the training code makes one

    def announce_evaluation(self, evaluating: bool) -> None:
        """Says at once, and in every heartbeat until it is unsaid, that this rank evaluates:
        its report comes late by design, and fulcrumd does not hold external.rank_timeout_s
        against it meanwhile, for at most external.evaluation_timeout_s (its heartbeats go
        on if the evaluation hangs). Announcements nest. ExternalJob.evaluating() is the
        usual way to say it."""
        self._evaluating = self._evaluating + 1 if evaluating else max(0, self._evaluating - 1)
        try:
            self._run(self._ws.send(self._heartbeat_frame()))
        except websockets.exceptions.ConnectionClosed:
            pass  # the training code's next call says why

    def announce_collective(self, waiting: bool) -> None:
        """Says, at once and in every heartbeat until unsaid, that this rank waits in its
        framework's collective (the all-reduce) for its peers: when an iteration stalls,
        fulcrumd then knows this rank is not the one holding it up (issue 42). train() says
        it from the iteration's first gradient bucket until its report is in. It does not
        wait for the frame to go out: the comm hook calls it on autograd's thread."""
        if self._collective == waiting:
            return
        self._collective = waiting
        if self._ws is not None and not self._loop.is_closed():
            asyncio.run_coroutine_threadsafe(self._send_quietly(self._heartbeat_frame()), self._loop)

    async def _send_quietly(self, frame: str) -> None:
        try:
            await self._ws.send(frame)
        except websockets.exceptions.ConnectionClosed:
            pass  # the training code's next call says why

    def _stop_loop(self) -> None:
        if self._heartbeat is not None:
            self._heartbeat.cancel()
        if not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(10)
            self._loop.close()

    def _receive(self, timeout_s: Optional[float], send: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
        async def exchange():
            if send is not None:
                await self._ws.send(json.dumps(send))
            return json.loads(await asyncio.wait_for(self._ws.recv(), timeout_s))
        try:
            return self._run(exchange())
        except websockets.exceptions.ConnectionClosed as e:
            raise ConnectionError(f"fulcrumd at {self.server} closed the connection: {e}") from e

    def request(self, message: Dict[str, Any], timeout_s: Optional[float] = None) -> Dict[str, Any]:
        """Sends a request and returns its reply; stream messages that come between are skipped.
        Raises FulcrumError for a refusal. `timeout_s` None waits as long as the job holds it
        (a paused job holds a rank's report)."""
        request_id = f"py{next(self._ids)}"
        message = dict(message, id=request_id)
        reply = self._receive(timeout_s, send=message)
        while not (reply.get("type") in ("reply", "error") and reply.get("id") == request_id):
            if reply.get("type") == "error" and not reply.get("id"):
                error = reply.get("error", {})
                raise FulcrumError(error.get("code", "error"), error.get("message", ""), error.get("field", ""))
            reply = self._receive(timeout_s)
        if not reply.get("ok", False):
            error = reply.get("error", {})
            raise FulcrumError(error.get("code", "error"), error.get("message", ""), error.get("field", ""))
        return reply

    # --- jobs ----------------------------------------------------------------------------
    def submit_job(self, scenario: Dict[str, Any]) -> int:
        return int(self.request({"type": "submit-job", "scenario": scenario}, self._timeout_s)["job"])

    def join(self, job: int, rank: int, host: str = "") -> Dict[str, Any]:
        return self.request({"type": "join-job", "job": job, "worker": rank, "host": host},
                            self._timeout_s)["assignment"]

    def report(self, job: int, rank: int, iteration: int, **measured: Any) -> Dict[str, Any]:
        """Reports an iteration (-1: ready) and waits for the plan of the next one."""
        message = {"type": "report-iteration", "job": job, "rank": rank, "iteration": iteration}
        message.update({k: v for k, v in measured.items() if v is not None})
        return self.request(message, None)["plan"]

    def jobs(self) -> List[Dict[str, Any]]:
        return self.request({"type": "list-jobs"}, self._timeout_s).get("jobs", [])

    def job(self, job: int) -> Dict[str, Any]:
        for status in self.jobs():
            if status["job"] == job:
                return status
        raise FulcrumError("unknown-job", f"there is no job {job}", "job")

    # --- operator commands (the console's and fulcrumctl's) ------------------------------
    def pause(self, job: int) -> None:
        self.request({"type": "pause-job", "job": job}, self._timeout_s)

    def resume(self, job: int) -> None:
        self.request({"type": "resume-job", "job": job}, self._timeout_s)

    def cancel(self, job: int) -> None:
        self.request({"type": "cancel-job", "job": job}, self._timeout_s)

    def pin(self, job: int, rank: int, batch_size: int) -> None:
        self.request({"type": "pin-worker", "job": job, "worker": rank, "batch_size": batch_size}, self._timeout_s)

    def unpin(self, job: int, rank: int) -> None:
        self.request({"type": "unpin-worker", "job": job, "worker": rank}, self._timeout_s)

    def exclude(self, job: int, rank: int, for_s: Optional[float] = None) -> None:
        message = {"type": "exclude-worker", "job": job, "worker": rank}
        if for_s is not None:
            message["for_s"] = for_s
        self.request(message, self._timeout_s)

    def include(self, job: int, rank: int) -> None:
        self.request({"type": "include-worker", "job": job, "worker": rank}, self._timeout_s)

    def set_policy(self, job: int, policy: Dict[str, Any]) -> None:
        self.request({"type": "set-policy", "job": job, "policy": policy}, self._timeout_s)

    def close(self) -> None:
        try:
            if not self._loop.is_closed():
                if self._heartbeat is not None:
                    self._heartbeat.cancel()
                if self._ws is not None:
                    self._run(self._ws.close())
        except Exception:  # closing after fulcrumd went away
            pass
        finally:
            self._stop_loop()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
