"""vLLM's KV-connector failure lines (parsers/vllm/disagg.py), through the engine seam the fleet
asks (`Engine.transfer_failure`). Each line is built from a wording read in the release wheels
(vllm-0.34.0 / vllm-0.11.0, vllm/distributed/kv_transfer/kv_connector/v1/ unless said; file:line
beside it) or modelled on a real paste (its source beside it), in vLLM's own head."""

from __future__ import annotations

import pytest

from kvtui.core.engine import load

VLLM = load("vllm")
SGLANG = load("sglang")
E = "(EngineCore_DP0 pid=241) ERROR 01-09 15:09:32"
W = "(EngineCore_DP0 pid=241) WARNING 01-09 15:09:32"

FAILURES = [
    # 0.34.0 nixl/base_worker.py:1455 `_log_failure`, one per failure type
    (f"{E} [base_worker.py:1454] NIXL transfer failure: handshake_setup_failed | Context: "
     "{'failure_type': 'handshake_setup_failed', 'request_id': None, 'engine_id': 'e1', "
     "'remote_engine_id': 'remote_engine'}", ("handshake", "either")),
    (f"{E} [base_worker.py:1454] NIXL transfer failure: handshake_failed | Context: "
     "{'failure_type': 'handshake_failed', 'request_id': 'cmpl-1'}", ("handshake", "either")),
    (f"{E} [base_worker.py:1454] NIXL transfer failure: transfer_failed | Context: "
     "{'failure_type': 'transfer_failed', 'xfer_state': 'ERR'}", ("transfer", "either")),
    (f"{E} [base_worker.py:1454] NIXL transfer failure: notification_failed. P worker blocks "
     "will be freed after timeout. This may indicate network issues. | Context: {}",
     ("transfer", "either")),
    (f"{E} [push_worker.py:512] NIXL transfer failure: push_handshake_failed | Context: {{}}",
     ("handshake", "either")),
    # vllm PR #32031's "after" lines (nixl_connector.py:1198 at the time)
    ("ERROR 01-09 15:09:32 [nixl_connector.py:1198] NIXL transfer failure: "
     "transfer_setup_failed. Marking blocks as invalid | Context: {'failure_type': "
     "'transfer_setup_failed', 'request_id': 'test_transfer_setup_failed_req', "
     "'remote_host': 'localhost', 'remote_port': 1234}", ("transfer", "either")),
    # ... and the "before" lines it replaced (0.11.0 nixl_connector.py:723 for the handshake)
    ("ERROR 01-09 12:04:08 [nixl_connector.py:1184] Handshake with remote_engine failed",
     ("handshake", "either")),
    ("ERROR 01-09 12:04:06 [nixl_connector.py:2281] NIXL transfer setup/initiation failed for "
     "request test_transfer_setup_failed_req. Marking blocks as invalid.",
     ("transfer", "either")),
    # 0.11.0 nixl_connector.py:668 and :1178: raised, a traceback's last line (no head)
    ("RuntimeError: Remote NIXL agent engine ID mismatch. Expected abc,received def.",
     ("handshake", "either")),
    ("RuntimeError: ('Transfer failed with state %s', 'ERR')", ("transfer", "either")),
    # prefill side: 0.11.0 nixl_connector.py:1119, 0.34.0 nixl/base_worker.py:3440
    (f"{W} [nixl_connector.py:1118] Releasing expired KV blocks for request cmpl-9 which "
     "were retrieved by 0 decode worker(s) within 120 seconds.", ("transfer", "prefill")),
    # aws-samples/aws-do-eks PR #84 (a prefill worker of vLLM on B200, 2026-08-16)
    ("WARNING 08-16 08:09:07 [worker.py:2967] Releasing expired KV blocks for request "
     "8f07dfc0-a2f0e657 which were retrieved by 0 remote worker(s) before lease expired.",
     ("transfer", "prefill")),
    # 0.11.0 nixl_connector.py:1141 / 0.34.0 nixl/pull_worker.py:742; vllm PR #25808's paste
    ("ERROR 09-27 17:06:12 [nixl_connector.py:1101] Potentially invalid KV blocks for "
     "unrecognized request cmpl-141e42e3-0 were retrieved by a decode worker. They may have "
     "expired.", ("transfer", "prefill")),
    (f"{W} [pull_worker.py:161] Declining expired remote read for cmpl-1 from engine e2.",
     ("transfer", "either")),
    (f"{W} [push_scheduler.py:322] NixlPushConnector: registration for request cmpl-1 timed "
     "out after 30.0s without a push completion", ("transfer", "decode")),
    (f"{E} [push_worker.py:409] No remote agents for engine e2; cannot send registration for "
     "cmpl-1", ("handshake", "either")),
    (f"{E} [push_worker.py:797] Unrecognized request cmpl-1 notif (may have expired).",
     ("transfer", "either")),
    # MooncakeConnector, 0.34.0 mooncake/mooncake_connector.py
    (f"{W} [mooncake_connector.py:2272] Sending to 10.0.0.2:17001 failed (ret=-1) after "
     "0.12s (4 descriptors, 65536 bytes)", ("transfer", "prefill")),
    (f"{E} [mooncake_connector.py:1741] Error processing Mooncake xfer request: boom",
     ("transfer", "prefill")),
    (f"{E} [mooncake_connector.py:1702] Error in Mooncake sender thread: x. Exiting thread.",
     ("transfer", "prefill")),
    (f"{E} [mooncake_connector.py:1753] Error in _sender_worker: x", ("transfer", "prefill")),
    (f"{W} [mooncake_connector.py:1890] Timeout waiting for P side ready: ['r1']",
     ("transfer", "prefill")),
    (f"{W} [mooncake_connector.py:1854] Requests ['r1'] were pulled after their KV expired "
     "on P side.", ("transfer", "prefill")),
    (f"{W} [mooncake_connector.py:1923] Request r1 expired before sending on P side.",
     ("transfer", "prefill")),
    (f"{W} [mooncake_connector.py:2564] Request r1 timed out after 120 seconds without being "
     "sent. Freeing its blocks on the producer side.", ("transfer", "prefill")),
    (f"{W} [mooncake_connector.py:2571] KV lease of request r1 expired before the decoder "
     "pulled it. Freeing its blocks on the producer side.", ("transfer", "prefill")),
    (f"{E} [mooncake_connector.py:1767] This D tp_rank 1 is not paired with P tp_rank 0; "
     "expected one of [0].", ("handshake", "prefill")),
    (f"{E} [mooncake_connector.py:2061] req r1: KV group count mismatch: local=2, remote=1",
     ("transfer", "prefill")),
    (f"{E} [mooncake_connector.py:2105] req r1: local blocks(3) < remote blocks(4) in a KV "
     "cache group (is_mamba_group=False)", ("transfer", "prefill")),
    (f"{E} [mooncake_connector.py:1655] Error registering {{'engine_id': 'e'}} with bootstrap "
     "server: refused", ("bootstrap", "prefill")),
    (f"{E} [mooncake_connector.py:2772] pulling kv_caches for ['r1'] failed: timeout",
     ("transfer", "decode")),
    (f"{E} [mooncake_connector.py:2849] Failed to connect to bootstrap server "
     "http://10.0.0.1:8998 (ConnectError): refused", ("bootstrap", "decode")),
    # the scheduler, 0.34.0 vllm/v1/core/sched/scheduler.py:3916, :3925
    (f"{E} [scheduler.py:3915] Failing 2 request(s) due to KV load failure "
     "(failure_policy=fail, 512 tokens affected). Request IDs: {'a', 'b'}",
     ("transfer", "decode")),
    (f"{W} [scheduler.py:3924] Recovered from KV load failure: 1 request(s) rescheduled "
     "(256 tokens affected).", ("transfer", "decode")),
    # P2pNcclConnector, 0.11.0 p2p/p2p_nccl_engine.py:453, :301
    (f"{E} [p2p_nccl_engine.py:452] 🔴Send Tensor, Peer Out Of Memory/Threshold, "
     "10.0.0.1:21001 👉 10.0.0.2:22001, MyRank:0, data:{}, tensor:t, size:1.0GB, response:{}",
     ("transfer", "prefill")),
    (f"{W} [p2p_nccl_engine.py:301] 🔴[GET]Recv From 10.0.0.1:21001, tensor_id: t1, ret: 1",
     ("transfer", "decode")),
    # Mooncake's transfer engine itself (parsers/transport.py): sglang #10001's decode log
    ("E0904 07:15:26.325699  5796 tcp_transport.cpp:172] Session::readBody failed. Error: End "
     "of file (value: 2), total_transferred_bytes: 0", ("transfer", "either")),
    ("E0101 00:00:01.000000  1 tcp_transport.cpp:300] ClientSession::writeBody failed. Attempt "
     "to write data 0x7f using buffer 0x7f. Error: Broken pipe (value: 32)",
     ("transfer", "either")),
]

NOT_FAILURES = [
    # retries that may yet succeed (0.34.0 mooncake_connector.py:1640, :2826)
    f"{W} [mooncake_connector.py:2825] Bootstrap query to http://10.0.0.1:8998 failed on "
    "attempt 1/3 (ConnectError: refused); retrying in 1.0 seconds",
    f"{W} [mooncake_connector.py:1639] Bootstrap registration attempt 1/5 for e failed with "
    "ConnectError: x. Retrying in 0.5s.",
    # a request that does not ask for a transfer, not a transfer that failed
    f"{W} [pull_scheduler.py:183] Got invalid KVTransferParams: {{}}. This request will not "
    "utilize KVTransfer",
    "(EngineCore_DP0 pid=241) INFO 01-09 15:09:32 [mooncake_connector.py:1910] Delaying free "
    "of 6 blocks for request chatcmpl-3566",
    "(EngineCore_DP0 pid=241) DEBUG 01-09 15:09:32 [scheduler.py:3720] Finished recving KV "
    "transfer for request r1",
    # "Handshake with ... failed" without the NIXL connector's file: anyone's words
    f"{E} [api_server.py:10] Handshake with client failed",
    # the ERROR level alone is no transfer failure
    f"{E} [core.py:100] EngineCore failed to start.",
    "(APIServer pid=1) INFO 01-09 15:09:32 [loggers.py:123] Engine 000: Avg prompt "
    "throughput: 0.0 tokens/s, Avg generation throughput: 12.3 tokens/s, Running: 3 reqs",
]


@pytest.mark.parametrize("line,expected", FAILURES)
def test_kv_connector_failure_lines(line, expected):
    assert VLLM.transfer_failure(line) == expected


@pytest.mark.parametrize("line", NOT_FAILURES)
def test_lines_that_are_no_transfer_failure(line):
    assert VLLM.transfer_failure(line) is None


def test_the_transfer_librarys_own_lines_are_read_by_either_engine():
    """Mooncake's glog lines land in whichever engine's log loaded it (SGLang's default
    backend): both engines read them alike."""
    glog = FAILURES[-2][0]
    assert SGLANG.transfer_failure(glog) == VLLM.transfer_failure(glog) == ("transfer", "either")


def test_sglang_reads_no_vllm_line():
    for line, _ in FAILURES[:-2]:
        assert SGLANG.transfer_failure(line) is None, line
