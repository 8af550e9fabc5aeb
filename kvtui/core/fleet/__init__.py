"""A deployment of several servers (issue 38): each server's report from the one pipeline, and
the alerts that exist only between servers (`kvtui.core.fleet.alerts`)."""

from kvtui.core.fleet.alerts import RULES, FleetOptions, evaluate, groups
from kvtui.core.fleet.server import ROLES, Sample, Server, log_samples, server_of
from kvtui.core.fleet.transfer import TransferWatch

__all__ = ["ROLES", "RULES", "FleetOptions", "Sample", "Server", "TransferWatch", "evaluate",
           "groups", "log_samples", "server_of"]
