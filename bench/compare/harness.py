#!/usr/bin/env python3
"""A minimal AHP 2.4 harness over stdio, the baseline of bench/compare.

Newline-delimited JSON-RPC 2.0 on stdin/stdout, standard library only, in
the style of the 2.4 Python example server: one process per agent, one
message per line, answered in order. It decides with the ten rules of
scenario/policy.yaml (nine on the shell command of a pre_action, one on a
tool name), allows everything else, and keeps no audit log.
"""

import json
import re
import sys

PROTOCOL_VERSION = "2.4"

# The ten rules of scenario/policy.yaml, in the same order.
COMMAND_RULES = [
    ("rm_root_or_home", re.compile(r"rm\s+-[a-zA-Z]*[rRf][a-zA-Z]*\s+(/|~|\$HOME)(\s|/?\*?$)")),
    ("dd_device", re.compile(r"(^|[;&|]\s*)dd\s+if=")),
    ("mkfs", re.compile(r"(^|\s)(mkfs(\.[a-z0-9]+)?|mke2fs|mkswap|wipefs)\s")),
    ("fork_bomb", re.compile(re.escape(":(){"))),
    ("pipe_to_shell", re.compile(r"(curl|wget)[^|]*\|\s*(sudo\s+)?(ba|z|da)?sh(\s|$)")),
    ("recursive_perms_root", re.compile(r"(chmod|chown)\s+-R\s+\S+\s+(/|~)(\s|$)")),
    ("power", re.compile(r"(^|[;&|]\s*)(sudo\s+)?(shutdown|reboot|halt|poweroff)(\s|$)")),
    ("block_device_write", re.compile(r">\s*/dev/(sd|nvme|vd)[a-z0-9]")),
    ("force_push", re.compile(r"git\s+push\s+.*(--force|-f)(\s|$)")),
]
BLOCKED_TOOLS = {"drop_database": "drop_database_tool"}

# Event types answered with a decision (spec section 4); the rest are
# fire-and-forget notifications.
BLOCKING = {
    "pre_action", "pre_prompt", "idle", "intent_detection", "context_perception",
    "memory_recall", "planning", "reasoning", "rate_limit", "confirmation",
}


class RPCError(Exception):
    def __init__(self, code, message):
        super().__init__(message)
        self.code = code
        self.message = message


def shell_command(payload):
    """The command argument of a tool call ("" when there is none)."""
    if not isinstance(payload, dict):
        return ""
    args = payload.get("arguments")
    if not isinstance(args, dict):
        return ""
    cmd = args.get("command")
    if isinstance(cmd, list):
        cmd = " ".join(str(w) for w in cmd)
    return cmd if isinstance(cmd, str) else ""


def decide(event):
    if not isinstance(event, dict) or not isinstance(event.get("event_type"), str):
        raise RPCError(-32602, "Invalid params: an event needs event_type")
    if event["event_type"] != "pre_action":
        return {"decision": "allow"}
    payload = event.get("payload")
    cmd = shell_command(payload)
    for rule, pattern in COMMAND_RULES:
        if pattern.search(cmd):
            return {"decision": "block", "reason": rule}
    tool = payload.get("tool_name") if isinstance(payload, dict) else None
    if tool in BLOCKED_TOOLS:
        return {"decision": "block", "reason": BLOCKED_TOOLS[tool]}
    return {"decision": "allow"}


def handshake(params):
    version = str((params or {}).get("protocol_version", ""))
    if version.split(".", 1)[0] != "2":
        raise RPCError(-32000, "Unsupported protocol version: " + version)
    return {
        "protocol_version": PROTOCOL_VERSION,
        "harness_info": {"name": "python-baseline", "version": "0.1", "capabilities": ["pre_action", "batch"]},
        "config": {"timeout_ms": 10000, "batch_size": 100, "max_depth": 10},
    }


def handle(msg):
    """Returns the response to one message, or None for a notification."""
    if not isinstance(msg, dict) or msg.get("jsonrpc") != "2.0" or not isinstance(msg.get("method"), str):
        return {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "Invalid Request"}}
    method, params = msg["method"], msg.get("params")
    is_request = "id" in msg
    try:
        if method == "ahp/event":
            blocking = isinstance(params, dict) and params.get("event_type") in BLOCKING
            if blocking and not is_request:
                return None  # a blocking event sent as a notification is dropped
            if not blocking and is_request:
                raise RPCError(-32602, "Invalid params: this event must be sent as a notification")
            result = decide(params) if is_request else None
        elif method == "ahp/handshake":
            result = handshake(params)
        elif method == "ahp/batch":
            events = (params or {}).get("events")
            if not isinstance(events, list) or len(events) > 100:
                raise RPCError(-32602, "Invalid params: events must be a list of at most 100")
            result = {"decisions": [decide(e) for e in events]}
        elif method == "ping":
            result = {}
        else:
            raise RPCError(-32601, "Method not found")
    except RPCError as e:
        if not is_request:
            return None
        return {"jsonrpc": "2.0", "id": msg["id"], "error": {"code": e.code, "message": e.message}}
    if not is_request:
        return None
    return {"jsonrpc": "2.0", "id": msg["id"], "result": result}


def main():
    out = sys.stdout
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            msg = json.loads(line)
        except ValueError:
            resp = {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}}
        else:
            resp = handle(msg)
        if resp is not None:
            out.write(json.dumps(resp, separators=(",", ":")) + "\n")
            out.flush()


if __name__ == "__main__":
    main()
