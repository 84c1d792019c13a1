package effects

import "strings"

// wipefsOpts are the wipefs options that take a value.
var wipefsOpts = shOpts("-o --offset -O --output -t --types")

// hWipefs reads wipefs. It erases signatures only with -a / --all or
// -o / --offset (a write of each operand), and not even then with
// -n / --no-act; otherwise it prints the signatures it finds (a read).
// Long options may be abbreviated as getopt allows (--al, --of, --no-); a
// word not known statically may be any option, so it counts as erasing.
func hWipefs(c *shCall) *shStream {
	p := c.parseOpts(c.args(), wipefsOpts, false)
	erase, noAct := false, false
	for _, o := range p.opts {
		switch {
		case o.name == "-a" || o.name == "-o" ||
			len(o.name) > 2 && (strings.HasPrefix("--all", o.name) || strings.HasPrefix("--offset", o.name)):
			erase = true
		case o.name == "-n" || len(o.name) > 4 && strings.HasPrefix("--no-act", o.name):
			noAct = true
		}
	}
	for _, w := range c.args() {
		if !w.known {
			erase, noAct = true, false
		}
	}
	if erase && !noAct {
		c.files(Write, p.ops, false)
	} else {
		c.files(Read, p.ops, false)
	}
	return nil
}
