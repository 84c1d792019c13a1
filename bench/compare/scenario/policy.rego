# The comparison scenario (bench/compare) for Open Policy Agent: the ten
# rules of policy.yaml. The input is the AHP JSON-RPC request as sent to
# our harness ({"input": <request>}); the answer is data.ahp.decision.
package ahp

cmd := object.get(input, ["params", "payload", "arguments", "command"], "")

tool := object.get(input, ["params", "payload", "tool_name"], "")

pre_action if input.params.event_type == "pre_action"

blocked contains "rm_root_or_home" if {
	pre_action
	regex.match(`rm\s+-[a-zA-Z]*[rRf][a-zA-Z]*\s+(/|~|\$HOME)(\s|/?\*?$)`, cmd)
}

blocked contains "dd_device" if {
	pre_action
	regex.match(`(^|[;&|]\s*)dd\s+if=`, cmd)
}

blocked contains "mkfs" if {
	pre_action
	regex.match(`(^|\s)(mkfs(\.[a-z0-9]+)?|mke2fs|mkswap|wipefs)\s`, cmd)
}

blocked contains "fork_bomb" if {
	pre_action
	contains(cmd, ":(){")
}

blocked contains "pipe_to_shell" if {
	pre_action
	regex.match(`(curl|wget)[^|]*\|\s*(sudo\s+)?(ba|z|da)?sh(\s|$)`, cmd)
}

blocked contains "recursive_perms_root" if {
	pre_action
	regex.match(`(chmod|chown)\s+-R\s+\S+\s+(/|~)(\s|$)`, cmd)
}

blocked contains "power" if {
	pre_action
	regex.match(`(^|[;&|]\s*)(sudo\s+)?(shutdown|reboot|halt|poweroff)(\s|$)`, cmd)
}

blocked contains "block_device_write" if {
	pre_action
	regex.match(`>\s*/dev/(sd|nvme|vd)[a-z0-9]`, cmd)
}

blocked contains "force_push" if {
	pre_action
	regex.match(`git\s+push\s+.*(--force|-f)(\s|$)`, cmd)
}

blocked contains "drop_database_tool" if {
	pre_action
	tool == "drop_database"
}

default decision := {"decision": "allow"}

decision := {"decision": "block", "reason": concat(", ", sort(blocked))} if count(blocked) > 0
