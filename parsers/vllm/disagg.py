"""vLLM's KV connectors (prefill/decode disaggregation): the lines that say a KV transfer, its
handshake or its bootstrap failed (issue 38). Not an event kind of the fold: only the fleet reads
them, line by line (`Engine.transfer_failure`, `kvtui.core.fleet.transfer`), so the per-log
report is unchanged. The transfer library's own lines (Mooncake's glog) are
`parsers.transport`'s, asked last.

Every wording is read from the release wheels (vllm-0.34.0 and vllm-0.11.0,
vllm/distributed/kv_transfer/kv_connector/v1/ unless said); the class of line is matched, never
its values.

NixlConnector
- 0.34.0 nixl/base_worker.py:1455 "NIXL transfer failure: %s | Context: %s", the failure type
  first (`_log_failure`): handshake_setup_failed (:1513), handshake_failed (:1549),
  transfer_failed (:3499), transfer_exception (:3509), transfer_release_failed (:3530),
  notification_failed (:3577; pull_worker.py:479, 540), transfer_setup_failed
  (pull_worker.py:637; push_worker.py:755), push_reg_handshake_failed (push_worker.py:390),
  push_reg_notif_failed (:422), push_handshake_failed (:512). The type names the kind.
  Introduced by vllm PR #32031 ("Failure logging overhaul"), which quotes the lines it
  replaced: "NIXL transfer setup/initiation failed for request %s. Marking blocks as invalid."
  and "Handshake with %s failed".
- 0.11.0 nixl_connector.py:723 "Handshake with %s failed" (logger.exception; read only with the
  file's name in the head: the words alone are any program's);
- 0.11.0 nixl_connector.py:668 "Remote NIXL agent engine ID mismatch." (a RuntimeError's text);
- 0.11.0 nixl_connector.py:1178 "Transfer failed with state %s" (a RuntimeError's text);
- prefill side, blocks the decode never read: "Releasing expired KV blocks for request %s which
  were retrieved by %d decode worker(s) within %d seconds." (0.11.0 nixl_connector.py:1119),
  "... by %d remote worker(s) before lease expired." (0.34.0 nixl/base_worker.py:3440);
  "Potentially invalid KV blocks for unrecognized request %s were retrieved by a decode worker.
  They may have expired." (0.11.0 nixl_connector.py:1141; 0.34.0 nixl/pull_worker.py:742);
- 0.34.0 nixl/pull_worker.py:162 "Declining expired remote read for %s from engine %s.";
- 0.34.0 push mode: nixl/push_scheduler.py:323 "NixlPushConnector: registration for request %s
  timed out after %.1fs without a push completion"; nixl/push_worker.py:410 "No remote agents
  for engine %s; cannot send registration for %s"; :798 "Unrecognized request %s notif (may have
  expired)."
MooncakeConnector (0.34.0 mooncake/mooncake_connector.py; not in 0.11.0)
- prefill (sender): :2273 "Sending to %s failed (ret=%s) after %s (%d descriptors, %d bytes)";
  :1741 "Error processing Mooncake xfer request: %s"; :1702 "Error in Mooncake sender thread:
  %s. Exiting thread."; :1753 "Error in _sender_worker: %s"; :1891 "Timeout waiting for P side
  ready: %s"; :1855 "Requests %s were pulled after their KV expired on P side."; :1924 "Request
  %s expired before sending on P side."; :2565 "Request %s timed out after %d seconds without
  being sent. Freeing its blocks on the producer side."; :2572 "KV lease of request %s expired
  before the decoder pulled it. ..."; :1764 "This D tp_rank %d is not paired with P tp_rank
  %d; ..."; :2062 "req %s: KV group count mismatch: local=%d, remote=%d"; :2106 "req %s: local
  blocks(%d) < remote blocks(%d) ..."; :1656 "Error registering %s with bootstrap server: %s";
- decode (puller): :2772 "pulling kv_caches for %s failed: %s"; :2850 "Failed to connect to
  bootstrap server %s (%s): %s". Its retry warnings (:1640, :2826) are not counted: a retry that
  succeeds failed nothing.
The scheduler (decode side, any connector that loads KV): 0.34.0 vllm/v1/core/sched/
scheduler.py:3916 "Failing %d request(s) due to KV load failure (failure_policy=fail, ...)",
:3925 "Recovered from KV load failure: %d request(s) rescheduled (%d tokens affected)."
P2pNcclConnector (0.11.0 p2p/p2p_nccl_engine.py; gone by 0.34.0): :453 "🔴Send Tensor, Peer Out
Of Memory/Threshold, ..." (prefill), :301 "🔴[GET]Recv From %s, tensor_id: %s, ret: %d" (the
receiver's failed GET).
LMCacheConnector's failures are printed by the lmcache package, not by vLLM: not read here.
"""

from __future__ import annotations

import regex

from parsers.transport import backend_failure

# the NIXL failure type names the kind (0.34.0 nixl/*.py `_log_failure(failure_type=...)`)
_NIXL = regex.compile(r"NIXL transfer failure: (\w+)")

# (kind, side, the needle every wording of the line holds, its pattern)
_PATTERNS: tuple[tuple[str, str, str, regex.Pattern[str]], ...] = (
    ("handshake", "either", "Handshake with", regex.compile(
        r"nixl_connector\.py:\d+\]\s.*\bHandshake with \S+ failed")),
    ("handshake", "either", "engine ID mismatch", regex.compile(
        r"Remote NIXL agent engine ID mismatch")),
    ("transfer", "either", "Transfer failed with state", regex.compile(
        r"Transfer failed with state")),
    ("transfer", "either", "NIXL transfer setup", regex.compile(
        r"NIXL transfer setup/initiation failed for request")),
    ("transfer", "prefill", "Releasing expired KV blocks", regex.compile(
        r"Releasing expired KV blocks for request \S+ which were retrieved by \d+ "
        r"(?:decode|remote) worker")),
    ("transfer", "prefill", "Potentially invalid KV blocks", regex.compile(
        r"Potentially invalid KV blocks for unrecognized request \S+ were retrieved")),
    ("transfer", "either", "Declining expired remote read", regex.compile(
        r"Declining expired remote read for \S+ from engine")),
    ("transfer", "decode", "NixlPushConnector: registration", regex.compile(
        r"NixlPushConnector: registration for request \S+ timed out")),
    ("handshake", "either", "No remote agents for engine", regex.compile(
        r"No remote agents for engine \S+; cannot send registration")),
    ("transfer", "either", "notif (may have expired)", regex.compile(
        r"Unrecognized request \S+ notif \(may have expired\)")),
    # MooncakeConnector
    ("transfer", "prefill", "Sending to", regex.compile(
        r"Sending to \S+ failed \(ret=")),
    ("transfer", "prefill", "Mooncake xfer request", regex.compile(
        r"Error processing Mooncake xfer request")),
    ("transfer", "prefill", "Mooncake sender thread", regex.compile(
        r"Error in Mooncake sender thread")),
    ("transfer", "prefill", "Error in _sender_worker", regex.compile(
        r"Error in _sender_worker")),
    ("transfer", "prefill", "Timeout waiting for P side ready", regex.compile(
        r"Timeout waiting for P side ready")),
    ("transfer", "prefill", "after their KV expired on P side", regex.compile(
        r"were pulled after their KV expired on P side")),
    ("transfer", "prefill", "expired before sending on P side", regex.compile(
        r"Request \S+ expired before sending on P side")),
    ("transfer", "prefill", "without being sent", regex.compile(
        r"Request \S+ timed out after \d+ seconds without being sent")),
    ("transfer", "prefill", "expired before the decoder pulled it", regex.compile(
        r"KV lease of request \S+ expired before the decoder pulled it")),
    ("handshake", "prefill", "is not paired with P tp_rank", regex.compile(
        r"This D tp_rank \d+ is not paired with P tp_rank")),
    ("transfer", "prefill", "KV group count mismatch", regex.compile(
        r"req \S+: KV group count mismatch")),
    ("transfer", "prefill", "< remote blocks(", regex.compile(
        r"req \S+: local blocks\(\d+\) < remote blocks\(\d+\)")),
    ("bootstrap", "prefill", "with bootstrap server", regex.compile(
        r"Error registering .* with bootstrap server")),
    ("transfer", "decode", "pulling kv_caches for", regex.compile(
        r"pulling kv_caches for .* failed")),
    ("bootstrap", "decode", "Failed to connect to bootstrap server", regex.compile(
        r"Failed to connect to bootstrap server")),
    # the scheduler, any connector that loads KV
    ("transfer", "decode", "due to KV load failure", regex.compile(
        r"Failing \d+ request\(s\) due to KV load failure")),
    ("transfer", "decode", "Recovered from KV load failure", regex.compile(
        r"Recovered from KV load failure: \d+ request\(s\) rescheduled")),
    # P2pNcclConnector (0.11.0)
    ("transfer", "prefill", "Peer Out Of Memory/Threshold", regex.compile(
        r"Send Tensor, Peer Out Of Memory/Threshold")),
    ("transfer", "decode", "[GET]Recv From", regex.compile(
        r"\[GET\]Recv From \S+, tensor_id: ?\S+, ret: ?-?\d+")),
)


# Every line above is logged at ERROR or WARNING (vLLM's head names the level) but the raised
# errors' texts, which a traceback's last line carries with no head: a line with neither is
# read no further (nearly every line: this runs beside the pipeline on each one).
_RAISED = ("Transfer failed with state", "engine ID mismatch")


def transfer_failure(text: str) -> tuple[str, str] | None:
    """(kind, side) when the line says a disaggregated KV transfer failed, else None. Kind:
    handshake | transfer | bootstrap; side: prefill | decode | either (who printed it)."""
    if "ERROR" not in text and "WARNING" not in text:
        if "Session::" in text:
            return backend_failure(text)
        if _RAISED[0] not in text and _RAISED[1] not in text:
            return None
    if "NIXL transfer failure" in text:
        m = _NIXL.search(text)
        if m is not None:
            return ("handshake" if "handshake" in m.group(1) else "transfer"), "either"
    for kind, side, needle, pat in _PATTERNS:
        if needle in text and pat.search(text) is not None:
            return kind, side
    return backend_failure(text)
