"""The real OpenSSH sshd fixtures of tests/ssh (skipped with them when sshd is missing)."""

from tests.ssh.conftest import (  # noqa: F401  (fixtures, found by name)
    jump_sshd,
    make_sshd,
    ssh_env,
    ssh_root,
    sshd,
    user_key,
)
