package effects

import "testing"

// TestWipefs: wipefs writes a device only when it erases (-a, --all, -o,
// their clusters and getopt abbreviations), never with -n / --no-act, and
// only reads it when it lists; a word not known statically counts as
// erasing.
func TestWipefs(t *testing.T) {
	ctx := Context{Cwd: "/work/proj", Home: "/home/ann", User: "ann"}
	for _, c := range []shellCase{
		{cmd: `wipefs -a /dev/nvme0n1`, want: []Effect{eWrite("/dev/nvme0n1")}},
		{cmd: `sudo wipefs --all /dev/sdb`, want: []Effect{eWrite("/dev/sdb")}},
		{cmd: `wipefs --al /dev/sdb`, want: []Effect{eWrite("/dev/sdb")}},
		{cmd: `wipefs -af /dev/sdb`, want: []Effect{eWrite("/dev/sdb")}},
		{cmd: `wipefs -fa /dev/sdb`, want: []Effect{eWrite("/dev/sdb")}},
		{cmd: `wipefs -o 0x1fe /dev/sdb`, want: []Effect{eWrite("/dev/sdb")}, not: []Effect{eWrite("/work/proj/0x1fe")}},
		{cmd: `wipefs --offset=0x438 /dev/sdb`, want: []Effect{eWrite("/dev/sdb")}},
		{cmd: `wipefs --of 0x438 /dev/sdb`, want: []Effect{eWrite("/dev/sdb")}},
		{cmd: `wipefs -t -n -a /dev/sdb`, want: []Effect{eWrite("/dev/sdb")}}, // -t takes "-n" as its value
		{cmd: `wipefs $FLAGS /dev/sdb`, want: []Effect{eWrite("/dev/sdb")}, unk: shUnkYes},
		{cmd: `wipefs -a -- -n`, want: []Effect{eWrite("/work/proj/-n")}},
		{cmd: `sudo wipefs /dev/sdb`, want: []Effect{eRead("/dev/sdb")}, not: []Effect{eWrite("/dev/sdb")}},
		{cmd: `wipefs -J -t ext4 /dev/sdb`, want: []Effect{eRead("/dev/sdb")}, not: []Effect{eWrite("/dev/sdb")}},
		{cmd: `sudo wipefs -a -n /dev/sdb`, want: []Effect{eRead("/dev/sdb")}, not: []Effect{eWrite("/dev/sdb")}},
		{cmd: `wipefs --all --no-act /dev/sdb`, want: []Effect{eRead("/dev/sdb")}, not: []Effect{eWrite("/dev/sdb")}},
		{cmd: `wipefs -an /dev/sdb`, want: []Effect{eRead("/dev/sdb")}, not: []Effect{eWrite("/dev/sdb")}},
	} {
		checkShellCase(t, ctx, c)
	}
}
