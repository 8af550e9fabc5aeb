"""ssh_config lookup for one host alias, the way `ssh HOST` would see it.

paramiko's `SSHConfig` does the Host/Match/token work but has no `Include` support (paramiko
#1044) and knows nothing of command-line overrides. So the config text is pre-resolved here
(Include globs inlined, relative to ~/.ssh like OpenSSH), and `-p/-l/-i` are prepended as a
`Host <alias>` block: ssh_config is "first value wins", which is exactly the precedence OpenSSH
gives command-line options, and it makes paramiko expand %p/%r in ProxyCommand with the
overridden values too.
"""

from __future__ import annotations

import contextlib
import getpass
import glob
import os
import re
import shlex
from dataclasses import dataclass, field

SYSTEM_CONFIG = "/etc/ssh/ssh_config"
MAX_INCLUDE_DEPTH = 16  # same bound as OpenSSH's READCONF_MAX_DEPTH


class SSHConfigError(Exception):
    """A config problem the user must fix; str() is the one-line message."""


@dataclass
class HostSpec:
    alias: str  # what the user typed (or the ProxyJump hop)
    hostname: str
    port: int = 22
    user: str = ""
    identity_files: list[str] = field(default_factory=list)
    identities_only: bool = False
    proxy_command: str | None = None
    proxy_jump: list[str] = field(default_factory=list)
    server_alive_interval: int = 0
    connect_timeout: float | None = None
    known_hosts_files: list[str] = field(default_factory=list)
    # yes | accept-new | no | off | ask (ssh_config(5); the default ask, which kvtui cannot do
    # without a terminal of its own, refuses an unknown key like yes)
    strict_host_key_checking: str = "ask"
    config_text: str = field(default="", repr=False)  # for looking up ProxyJump hops

    @property
    def label(self) -> str:
        port = f":{self.port}" if self.port != 22 else ""
        return f"{self.user}@{self.hostname}{port}"


_INCLUDE_RE = re.compile(r"^\s*include(?:\s*=\s*|\s+)(.+)$", re.IGNORECASE)
_BLOCK_RE = re.compile(r"^\s*(host|match)(?:\s*=\s*|\s+)", re.IGNORECASE)


def resolve_includes(path: str, *, system: bool = False, _depth: int = 0) -> str:
    """The text of a config file with every `Include` replaced by the included files' text.

    An Include inside a Host/Match block is followed by that block's header again, so lines after
    the Include keep applying to the enclosing block as they do in OpenSSH.
    """
    if _depth > MAX_INCLUDE_DEPTH:
        raise SSHConfigError(f"{path}: Include nested more than {MAX_INCLUDE_DEPTH} deep")
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()
    except OSError as exc:
        raise SSHConfigError(f"{path}: {exc.strerror or exc}") from None
    base = "/etc/ssh" if system else os.path.expanduser("~/.ssh")
    out: list[str] = []
    current_block: str | None = None
    for line in lines:
        stripped = line.strip()
        if _BLOCK_RE.match(stripped):
            current_block = stripped
        m = _INCLUDE_RE.match(stripped)
        if not m:
            out.append(line)
            continue
        try:
            patterns = shlex.split(m.group(1), comments=True)
        except ValueError as exc:
            raise SSHConfigError(f"{path}: bad Include line: {exc}") from None
        for pattern in patterns:
            pattern = os.path.expanduser(pattern)
            if not os.path.isabs(pattern):
                pattern = os.path.join(base, pattern)
            for inc in sorted(glob.glob(pattern)):
                if os.path.isfile(inc):
                    out.append(f"# kvtui: included from {inc}")
                    out.append(resolve_includes(inc, system=system, _depth=_depth + 1))
        if current_block is not None:
            out.append(current_block)
    return "\n".join(out) + "\n"


def default_config_text() -> str:
    """User config then the system config, as `ssh` without -F reads them."""
    parts: list[str] = []
    user_cfg = os.path.expanduser("~/.ssh/config")
    if os.path.isfile(user_cfg):
        parts.append(resolve_includes(user_cfg))
    if os.path.isfile(SYSTEM_CONFIG) and not os.environ.get("KVTUI_SSH_NO_SYSTEM_CONFIG"):
        with contextlib.suppress(SSHConfigError):
            parts.append("Host *\n" + resolve_includes(SYSTEM_CONFIG, system=True))
    return "\n".join(parts)


def _quote_value(value: str) -> str:
    return f'"{value}"' if any(c.isspace() for c in value) else value


def _override_block(alias: str, port: int | None, user: str | None,
                    identity: str | None) -> str:
    lines = [f"Host {alias}"]
    if port is not None:
        lines.append(f"  Port {port}")
    if user:
        lines.append(f"  User {_quote_value(user)}")
    if identity:
        path = os.path.abspath(os.path.expanduser(identity))
        lines.append(f"  IdentityFile {_quote_value(path)}")
    return "\n".join(lines) + "\n" if len(lines) > 1 else ""


def parse_jump(hop: str) -> tuple[str, str | None, int | None]:
    """`[user@]host[:port]` or `ssh://[user@]host[:port]` -> (host, user, port)."""
    hop = hop.strip()
    if hop.startswith("ssh://"):
        hop = hop[len("ssh://"):].rstrip("/")
    user = None
    if "@" in hop:
        user, hop = hop.rsplit("@", 1)
    port = None
    if hop.startswith("["):  # [v6addr]:port
        host, _, rest = hop[1:].partition("]")
        if rest.startswith(":") and rest[1:].isdigit():
            port = int(rest[1:])
        return host, user, port
    if hop.count(":") == 1:
        host, _, p = hop.partition(":")
        if p.isdigit():
            return host, user, int(p)
    return hop, user, port


def resolve_host(alias: str, *, config_path: str | None = None, port: int | None = None,
                 user: str | None = None, identity: str | None = None,
                 config_text: str | None = None) -> HostSpec:
    """Look `alias` up like `ssh [-F config] [-p port] [-l user] [-i identity] alias` would."""
    import paramiko  # lazy: keeps `kvtui --help` free of paramiko

    if config_text is None:
        if config_path:
            config_text = resolve_includes(os.path.expanduser(config_path))
        else:
            config_text = default_config_text()
    text = _override_block(alias, port, user, identity) + config_text
    try:
        cfg = paramiko.SSHConfig.from_text(text)
        opts = cfg.lookup(alias)
    except Exception as exc:  # ConfigParseError, bad Match, token errors
        raise SSHConfigError(f"ssh config: {exc}") from None

    def as_int(key: str, default: int) -> int:
        try:
            return int(opts.get(key, default))
        except (TypeError, ValueError):
            raise SSHConfigError(f"ssh config: {key} is not a number: {opts.get(key)!r}") from None

    spec = HostSpec(alias=alias, hostname=opts.get("hostname", alias),
                    port=as_int("port", 22), user=opts.get("user") or getpass.getuser())
    spec.identity_files = [os.path.expanduser(p) for p in opts.get("identityfile", [])]
    spec.identities_only = str(opts.get("identitiesonly", "no")).lower() == "yes"
    proxy = opts.get("proxycommand")
    spec.proxy_command = proxy if proxy else None
    jump = opts.get("proxyjump")
    if jump and jump.lower() != "none" and not spec.proxy_command:
        spec.proxy_jump = [h for h in jump.split(",") if h.strip()]
    spec.server_alive_interval = as_int("serveraliveinterval", 0)
    if "connecttimeout" in opts:
        spec.connect_timeout = float(as_int("connecttimeout", 10))
    files = opts.get("userknownhostsfile")
    if files:
        spec.known_hosts_files = [os.path.expanduser(p) for p in shlex.split(files)]
    else:
        spec.known_hosts_files = [os.path.expanduser("~/.ssh/known_hosts"),
                                  os.path.expanduser("~/.ssh/known_hosts2")]
    spec.strict_host_key_checking = str(opts.get("stricthostkeychecking", "ask")).lower()
    global_files = opts.get("globalknownhostsfile")
    spec.known_hosts_files += (shlex.split(global_files) if global_files
                               else ["/etc/ssh/ssh_known_hosts"])
    spec.config_text = config_text
    return spec


def resolve_jump(hop: str, parent: HostSpec) -> HostSpec:
    """A ProxyJump hop, looked up in the same config as the host that names it."""
    host, user, port = parse_jump(hop)
    return resolve_host(host, port=port, user=user, config_text=parent.config_text)
