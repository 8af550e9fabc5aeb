"""Stand-in servers for the real `docker` and `kubectl` clients, and real journal files.

No Docker engine or Kubernetes cluster runs on the test machine, but the clients do: the tests run
the real `docker` CLI against a stand-in Engine API on a unix socket (DOCKER_HOST) and the real
`kubectl` against a stand-in API server on 127.0.0.1 (KUBECONFIG), so the argument parsing, the
output format and the error texts are the clients' own. The servers answer only what `docker
logs`, `docker inspect`, `kubectl logs` and `kubectl get pod` ask, as the real ones do (Docker
Engine API: GET /containers/{id}/logs with a multiplexed stream and daemon-side timestamps in
RFC3339NanoFixed; Kubernetes: GET /api/v1/namespaces/{ns}/pods/{pod}/log, `Status` objects for
errors). Journal files are written by systemd-journal-remote and read by the real journalctl.
"""

from __future__ import annotations

import http.server
import json
import os
import shutil
import socketserver
import struct
import subprocess
import tempfile
import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

BASE_NS = 1_795_511_660 * 10**9  # 2026-11-24T09:14:20Z


def rfc3339(ns: int, *, fixed: bool) -> str:
    """Docker prints nine fraction digits always (RFC3339NanoFixed); the kubelet trims zeros."""
    secs, frac = divmod(ns, 10**9)
    head = datetime.fromtimestamp(secs, UTC).strftime("%Y-%m-%dT%H:%M:%S")
    digits = f"{frac:09d}"
    if not fixed:
        digits = digits.rstrip("0")
    return f"{head}.{digits}Z" if digits else f"{head}Z"


@dataclass
class Instance:
    """One run of a container: its lines (ns, stream 1/2, text) and how it ended."""

    cid: str
    started_ns: int
    lines: list[tuple[int, int, str]] = field(default_factory=list)
    running: bool = True
    exit_code: int | None = None
    reason: str | None = None


class LogStore:
    """Containers by name, each a list of instances (the last is current). Thread-safe."""

    def __init__(self) -> None:
        self.cond = threading.Condition()
        self.containers: dict[str, list[Instance]] = {}
        self.requests: list[str] = []
        self.closed = False
        self.images: dict[str, tuple[str, str]] = {}  # name -> (image, command), for `docker ps`
        self.cluster_wide_forbidden = False  # kubectl get pods --all-namespaces is refused

    def add(self, name: str, cid: str = "c0", *, image: str = "lmsysorg/sglang:latest",
            command: str = "python3 -m sglang.launch_server") -> None:
        with self.cond:
            self.containers[name] = [Instance(cid, BASE_NS)]
            self.images[name] = (image, command)

    def write(self, name: str, ns: int, text: str, stream: int = 2) -> None:
        with self.cond:
            self.containers[name][-1].lines.append((ns, stream, text))
            self.cond.notify_all()

    def stop(self, name: str, exit_code: int = 137, reason: str = "OOMKilled") -> None:
        with self.cond:
            inst = self.containers[name][-1]
            inst.running, inst.exit_code, inst.reason = False, exit_code, reason
            self.cond.notify_all()

    def restart(self, name: str, cid: str, started_ns: int) -> None:
        with self.cond:
            self.containers[name].append(Instance(cid, started_ns))
            self.cond.notify_all()

    def shutdown(self) -> None:
        with self.cond:
            self.closed = True
            self.cond.notify_all()

    def stream(self, name: str, since_ns: int, follow: bool, *, previous: bool = False,
               every_run: bool = False):
        """Yield (ns, stream, text) from `since_ns` on: of the current instance, the previous
        one, or (docker's json-file log) every instance so far; following, wait for more until
        the current instance stops."""
        with self.cond:
            runs = list(self.containers[name])
        insts = runs[-2:-1] if previous else runs if every_run else runs[-1:]
        for inst in insts[:-1]:
            yield from (item for item in list(inst.lines) if item[0] >= since_ns)
        inst = insts[-1]
        sent = 0
        while True:
            with self.cond:
                pending = inst.lines[sent:]
                sent = len(inst.lines)
                done = not follow or not inst.running or self.closed
                if not pending and not done:
                    self.cond.wait(0.2)
                    continue
            for item in pending:
                if item[0] >= since_ns:
                    yield item
            if done and sent == len(inst.lines):
                return


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    store: LogStore

    def log_message(self, *args: Any) -> None:
        pass

    def _json(self, code: int, obj: Any) -> None:
        body = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self._extra_headers()
        self.end_headers()
        self.wfile.write(body)

    def _extra_headers(self) -> None:
        pass

    def _stream_head(self, ctype: str) -> None:
        self.send_response(200)
        self.send_header("Content-Type", ctype)
        self.send_header("Connection", "close")
        self._extra_headers()
        self.end_headers()
        self.close_connection = True


class _DockerHandler(_Handler):
    """The Docker Engine API calls `docker logs` and `docker inspect` make."""

    def _extra_headers(self) -> None:
        self.send_header("Api-Version", "1.45")

    def do_HEAD(self) -> None:  # /_ping
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self._extra_headers()
        self.end_headers()

    def do_GET(self) -> None:
        url = urlsplit(self.path)
        self.store.requests.append(self.path)
        parts = url.path.split("/")
        if url.path.endswith("/_ping"):
            body = b"OK"
            self.send_response(200)
            self.send_header("Content-Length", "2")
            self._extra_headers()
            self.end_headers()
            self.wfile.write(body)
            return
        if len(parts) == 4 and parts[2:] == ["containers", "json"]:
            self._ps(parse_qs(url.query).get("all", ["0"])[0] in ("1", "true"))
            return
        if len(parts) < 5 or parts[2] != "containers":
            self._json(404, {"message": "page not found"})
            return
        name = parts[3]
        runs = self.store.containers.get(name)
        if runs is None:
            self._json(404, {"message": f"No such container: {name}"})
            return
        if parts[4] == "json":
            inst = runs[-1]
            self._json(200, {
                "Id": name, "Name": f"/{name}", "RestartCount": len(runs) - 1,
                "Config": {"Tty": False},
                "State": {"Status": "running" if inst.running else "exited",
                          "Running": inst.running, "OOMKilled": inst.reason == "OOMKilled",
                          "ExitCode": inst.exit_code or 0,
                          "StartedAt": rfc3339(inst.started_ns, fixed=True)}})
            return
        q = parse_qs(url.query)
        since = 0
        if q.get("since"):
            sec, _, frac = q["since"][0].partition(".")
            since = int(sec) * 10**9 + int(frac.ljust(9, "0")[:9] or 0)
        follow = q.get("follow", ["0"])[0] in ("1", "true")
        self._stream_head("application/vnd.docker.multiplexed-stream")
        try:
            for ns, stream, text in self.store.stream(name, since, follow, every_run=True):
                payload = f"{rfc3339(ns, fixed=True)} {text}\n".encode()
                self.wfile.write(struct.pack(">BxxxI", stream, len(payload)) + payload)
                self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass


    def _ps(self, every: bool) -> None:
        """GET /containers/json (`docker ps`): the running containers, or all with ?all=1."""
        out = []
        for name, runs in self.store.containers.items():
            inst = runs[-1]
            if not inst.running and not every:
                continue
            image, command = self.store.images.get(name, ("", ""))
            out.append({"Id": f"{inst.cid:0<64}", "Names": [f"/{name}"], "Image": image,
                        "ImageID": "sha256:" + "0" * 64, "Command": command,
                        "Created": inst.started_ns // 10**9, "Ports": [], "Labels": {},
                        "State": "running" if inst.running else "exited",
                        "Status": "Up 1 minute" if inst.running else "Exited (137)",
                        "HostConfig": {"NetworkMode": "host"}, "NetworkSettings": {},
                        "Mounts": []})
        self._json(200, out)


class _UnixServer(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True

    def get_request(self):  # type: ignore[no-untyped-def]
        conn, _ = super().get_request()
        return conn, ("local", 0)


def _status(code: int, reason: str, message: str) -> dict[str, Any]:
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": message, "reason": reason, "code": code}


class _KubeHandler(_Handler):
    """The Kubernetes API calls `kubectl logs` and `kubectl get pod` make."""

    forbidden_namespaces = ("secret",)

    def do_GET(self) -> None:
        url = urlsplit(self.path)
        self.store.requests.append(self.path)
        path = url.path
        if path == "/version":
            self._json(200, {"major": "1", "minor": "32", "gitVersion": "v1.32.0"})
        elif path == "/api":
            self._json(200, {"kind": "APIVersions", "versions": ["v1"],
                             "serverAddressByClientCIDRs": [
                                 {"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1"}]})
        elif path == "/apis":
            self._json(200, {"kind": "APIGroupList", "apiVersion": "v1", "groups": []})
        elif path == "/api/v1":
            self._json(200, {"kind": "APIResourceList", "groupVersion": "v1", "resources": [
                {"name": "pods", "singularName": "pod", "namespaced": True, "kind": "Pod",
                 "verbs": ["get", "list"], "shortNames": ["po"]},
                {"name": "pods/log", "singularName": "", "namespaced": True, "kind": "Pod",
                 "verbs": ["get"]}]})
        elif path == "/api/v1/pods":  # kubectl get pods --all-namespaces
            self._pods("default", every=True)
        elif path.startswith("/api/v1/namespaces/") and path.endswith("/pods"):
            self._pods(path.split("/")[4], every=False)
        elif path.startswith("/api/v1/namespaces/"):
            self._pod(path.split("/")[4:], parse_qs(url.query))
        else:
            self._json(404, _status(404, "NotFound",
                                    "the server could not find the requested resource"))

    def _pod(self, parts: list[str], q: dict[str, list[str]]) -> None:
        ns, pod = parts[0], parts[2] if len(parts) > 2 else ""
        if ns in self.forbidden_namespaces:
            self._json(403, _status(403, "Forbidden", f'pods "{pod}" is forbidden: User "dev" '
                                    'cannot get resource "pods" in API group "" in the '
                                    f'namespace "{ns}"'))
            return
        runs = self.store.containers.get(pod)
        if runs is None:
            self._json(404, _status(404, "NotFound", f'pods "{pod}" not found'))
            return
        if len(parts) == 3:
            self._json(200, self._pod_object(ns, pod, runs))
            return
        container = q.get("container", ["server"])[0]
        if container != "server":
            self._json(400, _status(400, "BadRequest",
                                    f"container {container} is not valid for pod {pod}"))
            return
        previous = q.get("previous", ["false"])[0] == "true"
        if previous and len(runs) < 2:
            self._json(400, _status(400, "BadRequest", f'previous terminated container '
                                    f'"{container}" in pod "{pod}" not found'))
            return
        since = 0
        if q.get("sinceTime"):  # whole seconds, as metav1.Time keeps them
            when = datetime.strptime(q["sinceTime"][0], "%Y-%m-%dT%H:%M:%SZ")
            since = int(when.replace(tzinfo=UTC).timestamp()) * 10**9
        follow = q.get("follow", ["false"])[0] == "true"
        self._stream_head("text/plain")
        try:
            for ns_, _, text in self.store.stream(pod, since, follow, previous=previous):
                self.wfile.write(f"{rfc3339(ns_, fixed=False)} {text}\n".encode())
                self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass

    def _pods(self, ns: str, every: bool) -> None:
        """A PodList: every pod of the store lives in "default" (a forbidden namespace lists
        as forbidden, and so does --all-namespaces for a user who may not list them all)."""
        if ns in self.forbidden_namespaces or (every and self.store.cluster_wide_forbidden):
            self._json(403, _status(403, "Forbidden", 'pods is forbidden: User "dev" cannot '
                                    'list resource "pods" in API group ""' +
                                    ("" if every else f' in the namespace "{ns}"')))
            return
        items = [self._pod_object("default", pod, runs, self.store.images.get(pod))
                 for pod, runs in self.store.containers.items()] if ns == "default" else []
        self._json(200, {"kind": "PodList", "apiVersion": "v1", "metadata": {},
                         "items": items})

    @staticmethod
    def _pod_object(ns: str, pod: str, runs: list[Instance],
                    image: tuple[str, str] | None = None) -> dict[str, Any]:
        inst = runs[-1]
        status: dict[str, Any] = {
            "name": "server", "restartCount": len(runs) - 1,
            "containerID": f"containerd://{inst.cid}", "ready": inst.running,
            "state": {"running": {"startedAt": rfc3339(inst.started_ns, fixed=False)}}
            if inst.running else {"terminated": {"exitCode": inst.exit_code,
                                                 "reason": inst.reason}}}
        if len(runs) > 1:
            prev = runs[-2]
            status["lastState"] = {"terminated": {"exitCode": prev.exit_code,
                                                  "reason": prev.reason}}
        return {"kind": "Pod", "apiVersion": "v1",
                "metadata": {"name": pod, "namespace": ns},
                "spec": {"containers": [{"name": "server",
                                         "image": image[0] if image else "lmsysorg/sglang"}]},
                "status": {"phase": "Running", "containerStatuses": [status]}}


class _TCPServer(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True


@dataclass
class Served:
    store: LogStore
    env: dict[str, str]
    server: socketserver.BaseServer
    sockdir: Path | None = None  # a folder of the server's own socket, removed on close

    def close(self) -> None:
        self.store.shutdown()
        self.server.shutdown()
        self.server.server_close()
        if self.sockdir is not None:
            shutil.rmtree(self.sockdir, ignore_errors=True)


def serve_docker(tmp: Path) -> Served:
    store = LogStore()
    # The socket in a short folder of its own under TMPDIR, removed by close(): an AF_UNIX path
    # has at most 107 bytes, and a pytest-xdist worker's tmp_path (.../popen-gw0/<test>0/...)
    # can be longer than that.
    short = Path(tempfile.mkdtemp(prefix="dk"))
    sock = short / "docker.sock"
    handler = type("H", (_DockerHandler,), {"store": store})
    server = _UnixServer(str(sock), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    env = dict(os.environ, DOCKER_HOST=f"unix://{sock}", DOCKER_CONFIG=str(tmp / "dockercfg"))
    return Served(store, env, server, short)


def serve_kube(tmp: Path) -> Served:
    store = LogStore()
    handler = type("H", (_KubeHandler,), {"store": store})
    server = _TCPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    cfg = tmp / "kubeconfig"
    cfg.write_text(
        "apiVersion: v1\nkind: Config\n"
        f"clusters:\n- cluster: {{server: 'http://127.0.0.1:{port}'}}\n  name: test\n"
        "contexts:\n- context: {cluster: test, user: dev, namespace: default}\n  name: test\n"
        "current-context: test\nusers:\n- name: dev\n  user: {token: t0k3n}\n")
    home = tmp / "home"
    home.mkdir(exist_ok=True)
    env = dict(os.environ, KUBECONFIG=str(cfg), HOME=str(home))
    return Served(store, env, server)


# -- journald ------------------------------------------------------------------------------

JOURNAL_REMOTE = "/lib/systemd/systemd-journal-remote"
BOOT = "0123456789abcdef0123456789abcdef"


def journal_entry(msg: str, us: int, unit: str = "sglang.service", pid: int = 4242) -> str:
    """One entry in the Journal Export Format (what systemd-journal-remote reads)."""
    fields = {"__REALTIME_TIMESTAMP": us, "__MONOTONIC_TIMESTAMP": us % 10**9,
              "_BOOT_ID": BOOT, "_HOSTNAME": "gpu-node-1", "_SYSTEMD_UNIT": unit,
              "SYSLOG_IDENTIFIER": "python3", "_PID": pid, "PRIORITY": 6,
              "_TRANSPORT": "stdout", "MESSAGE": msg}
    return "".join(f"{k}={v}\n" for k, v in fields.items()) + "\n"


def write_journal(path: Path, entries: list[str]) -> None:
    """Append entries to a journal file with systemd-journal-remote (no daemon needed)."""
    src = path.with_suffix(".export")
    src.write_text("".join(entries))
    subprocess.run([JOURNAL_REMOTE, f"--output={path}", str(src)], check=True,
                   capture_output=True)


def journal_bin(tmp: Path, journal: Path, units: tuple[str, ...] = ("sglang.service",)) -> Path:
    """A bin dir whose `journalctl` is the real one reading `journal`, and whose `systemctl`
    answers `show --property LoadState --value UNIT` as systemd does (no systemd runs here)."""
    real = shutil.which("journalctl")
    assert real is not None
    bindir = tmp / "bin"
    bindir.mkdir(exist_ok=True)
    jc = bindir / "journalctl"
    jc.write_text(f'#!/bin/sh\nexec {real} --file={journal} "$@"\n')
    known = " ".join(units)
    sc = bindir / "systemctl"
    sc.write_text(
        "#!/bin/sh\n"
        '[ "$1 $2 $3 $4" = "show --property LoadState --value" ] || '
        '{ echo "systemctl stand-in: unexpected arguments: $*" >&2; exit 2; }\n'
        f'for u in {known}; do [ "$u" = "$5" ] && {{ echo loaded; exit 0; }}; done\n'
        "echo not-found\n")
    jc.chmod(0o755)
    sc.chmod(0o755)
    return bindir
