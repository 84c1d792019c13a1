package policy

import "testing"

// TestDestructiveShellEveryOperand: the rules that look for / or the home
// directory read every operand, not only the first one after the flags.
func TestDestructiveShellEveryOperand(t *testing.T) {
	const p = "destructive_shell."
	blocked := map[string]string{
		"rm -rf --no-preserve-root /tmp/x /":         "rm_root_or_home",
		"rm -rf /tmp/x ~":                            "rm_root_or_home",
		"rm -rf ./a ./b $HOME":                       "rm_root_or_home",
		`rm -rf "a b" '/'`:                           "rm_root_or_home",
		"rm -rf 'x;y' ~/":                            "rm_root_or_home",
		`rm -rf 'it'\''s' /`:                         "rm_root_or_home",
		"rm /tmp/x ~ -rf":                            "rm_root_or_home",
		"rm -f ~ -r":                                 "rm_root_or_home",
		"rm -rf /tmp/x 2>/dev/null /*":               "rm_root_or_home",
		"/bin/rm -rf /tmp/x ${HOME}":                 "rm_root_or_home",
		"rm -rf /tmp/x \\\n  /":                      "rm_root_or_home",
		"bash -c 'rm -rf /tmp/x ~'":                  "rm_root_or_home",
		`sh -c "cd / && rm -rf ./x /"`:               "rm_root_or_home",
		"chmod -R 777 /tmp/x /":                      "recursive_perms_root",
		"chown -R a:b ./x /":                         "recursive_perms_root",
		"chgrp -R staff ./x ~":                       "recursive_perms_root",
		"chmod 777 /tmp/x / -R":                      "recursive_perms_root",
		"mv /tmp/x ~ /tmp/y":                         "move_root_or_home",
		"mv -f ./a ~ /tmp/old":                       "move_root_or_home",
		"mv -t /tmp/old ./a ~":                       "move_root_or_home",
		"mv --target-directory=/tmp/old ./a /":       "move_root_or_home",
		"find /tmp/x / -name '*.log' -delete":        "find_delete_root",
		"find . ~ -type f -delete":                   "find_delete_root",
		"find -L /tmp ~ -exec rm -f {} +":            "find_delete_root",
		"find /tmp / -name 'a;b' -delete":            "find_delete_root",
		"find ./x / -type f -execdir /bin/rm {} \\;": "find_delete_root",
	}
	allowed := []string{
		"rm -rf /tmp/x /tmp/y",
		"rm -rf ./build ~/projects/old-demo",
		"rm ~/a /tmp/b",
		"rm -f / ",                 // not recursive (and rm refuses a directory)
		"rm -rf build && cd /",     // / belongs to the next command
		"rm -rf build; ls ~",       // likewise
		"rm -rf build | tee ~",     // likewise
		"echo rm -rf x > /tmp/log", // no operand is / or ~
		"mv /tmp/x ~",              // moves into the home directory
		"mv ./a ./b ~/",            // likewise
		"mv ~/a.txt ~/b.txt",
		"chmod -R 755 ./bin ./lib",
		"chmod 644 ~/notes.txt /tmp/x",
		"chown -R me ./x && ls /",
		"find . /tmp -name '*.o' -delete",
		"find ~/src -name '*.o' -delete",
		"find / -name '*.gz'",
		"find . -name x -delete; ls ~",
	}
	var cases []packCase
	for cmd, rule := range blocked {
		cases = append(cases, packCase{"block " + cmd, in(bash(cmd)), p + rule})
	}
	for _, cmd := range allowed {
		cases = append(cases, packCase{"allow " + cmd, in(bash(cmd)), ""})
	}
	argv := func(words ...string) *Input { return in(action("exec", map[string]any{"command": words})) }
	cases = append(cases,
		packCase{"argv rm -rf /", argv("rm", "-rf", "/"), p + "rm_root_or_home"},
		packCase{"argv rm second operand", argv("rm", "-rf", "/tmp/x", "/"), p + "rm_root_or_home"},
		packCase{"argv rm after quote", argv("rm", "-rf", `"`, "/"), p + "rm_root_or_home"},
		packCase{"argv rm after apostrophe", argv("rm", "-rf", "it's", "~"), p + "rm_root_or_home"},
		packCase{"argv rm empty operand", argv("rm", "-rf", "", "/"), p + "rm_root_or_home"},
		packCase{"argv bash -lc", argv("bash", "-lc", "rm -rf /tmp/x /"), p + "rm_root_or_home"},
		packCase{"argv bash -c mkfs", argv("bash", "-c", "mkfs.ext4 /dev/sdb1"), p + "mkfs"},
		packCase{"argv bash -c reboot", argv("bash", "-c", "reboot"), p + "power"},
		packCase{"argv chmod", argv("chmod", "-R", "777", "/tmp/x", "/"), p + "recursive_perms_root"},
		packCase{"argv find", argv("find", "/tmp", "/", "-delete"), p + "find_delete_root"},
		packCase{"argv path with space", argv("rm", "-rf", "/tmp/a b"), ""},
		packCase{"argv one word", argv("echo", "rm -rf / is bad"), ""},
	)
	runPackCases(t, only("destructive_shell"), cases)
}
