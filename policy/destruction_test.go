package policy

import (
	"strings"
	"testing"

	"github.com/ahp-go/ahp/protocol"
)

// TestDestructionNamedByTarget: what issue 35 item 2 names — a repository's
// version history, a home's credential and project directories, disks and
// volumes, remote databases, a recursive delete whose target is not known
// before it runs — is stopped by the default packs in the spellings an
// attacker picks, with a reason that names what is destroyed even when
// another rule matches too; the ordinary work next to each is let through.
func TestDestructionNamedByTarget(t *testing.T) {
	type want struct {
		rule   string
		kind   protocol.DecisionKind
		reason string // a part of the reason shown
	}
	history := want{"data_loss.version_history", protocol.DecisionEscalate, "version history (.git)"}
	home := want{"destructive_shell.rm_home_named_dirs", protocol.DecisionBlock, "credential or project directory of the home"}
	hidden := want{"destructive_shell.rm_hidden_target", protocol.DecisionEscalate, "recursive delete of a path not known before the command runs"}
	disk := want{"destructive_shell.volumes", protocol.DecisionBlock, "destroys a disk or volume"}
	rawDisk := want{"destructive_shell.disk_tools", protocol.DecisionBlock, "destroys a disk or volume"}
	remoteDB := want{"data_loss.remote_database_drop", protocol.DecisionEscalate, "drops a remote database"}
	stopped := map[string]want{
		// the project's version history, through any tool
		`rm -rf .git`:                                 history,
		`"rm" -rf ./.git/`:                            history,
		`/bin/rm -rf /work/proj/.git`:                 history,
		`sudo rm -rf .git`:                            history,
		`sh -c 'rm -rf .git'`:                         history,
		`bash -c "$(echo rm -rf .git)"`:               history,
		`G=.git; rm -rf "$G"`:                         history,
		`rm -rf .g?t`:                                 history,
		`rm -rf .git/*`:                               history,
		`rm -rf .git/objects`:                         history,
		`rm -rf .git/objects/pack`:                    history,
		`rm -f .git/packed-refs`:                      history,
		`rm -rf .git/logs`:                            history,
		`rm -rf "$D/.git"`:                            history,
		`find .git -delete`:                           history,
		`find . -name .git -type d | xargs rm -rf`:    history,
		`find . -type d -name .git -exec rm -rf {} +`: history,
		`rsync -a --delete empty/ .git/`:              history,
		`mv .git /tmp/x && rm -rf /tmp/x`:             history,
		`git filter-branch --tree-filter 'rm -f x' -- --all && rm -rf .git/refs/original`:      history,
		`git for-each-ref --format='%(refname)' refs/original/ | xargs -n 1 git update-ref -d`: history,
		`git filter-repo --invert-paths --path src --force`:                                    history,
		`git reflog expire --expire=now --all && git gc --prune=now`:                           history,
		`git reflog expire --expire-unreachable=now --all`:                                     history,
		`git -c gc.reflogExpire=now -c gc.reflogExpireUnreachable=now gc --prune=now`:          history,
		`git config gc.reflogExpire 0 && git gc --prune=now`:                                   history,
		`python3 -c 'import shutil; shutil.rmtree(".git")'`:                                    history,
		`node -e 'require("fs").rmSync(".git", {recursive: true, force: true})'`:               history,
		`perl -e 'use File::Path; rmtree(".git")'`:                                             history,
		`ruby -e 'require "fileutils"; FileUtils.rm_rf(".git")'`:                               history,
		// named parts of a home
		`rm -rf ~/{.ssh,.aws}`:                       home,
		`rm -rf ~/.ssh/`:                             home,
		`rm -rf "$HOME/.aws"`:                        home,
		`rm -rf ~/.kube`:                             home,
		`rm -rf ~/.gnupg`:                            home,
		`rm -rf ~/src ~/projects`:                    home,
		`rm -rf ~/code`:                              home,
		`rm -rf ~/go`:                                home,
		`rm -rf ~/work`:                              home,
		`rm -rf ~/Documents`:                         home,
		`rm -rf ~/src/*`:                             home,
		`rm -rf ~/.ss?`:                              home,
		`sudo rm -rf /root/.ssh`:                     home,
		`rm -rf /home/bob/.aws`:                      home,
		`cd ~ && rm -rf .ssh .aws`:                   home,
		`for d in .ssh .aws; do rm -rf ~/$d; done`:   home,
		`echo ~/.ssh ~/.aws | xargs rm -rf`:          home,
		`printf '%s\n' ~/.ssh ~/.aws | xargs rm -rf`: home,
		`find ~/.ssh -delete`:                        home,
		`rsync -a --delete /tmp/empty/ ~/projects/`:  home,
		`python3 -c 'import shutil, os; shutil.rmtree(os.path.expanduser("~/.ssh"))'`:          home,
		`node -e 'require("fs").rmSync(require("os").homedir() + "/.aws", {recursive: true})'`: home,
		// the reason names the home's directory when a credential rule matches too
		`rm -rf ~/.ssh; cat ~/.aws/credentials`: home,
		// a recursive delete whose target nobody can see before it runs
		`rm -rf "$(cat f)"`:                          hidden,
		`rm -rf $X`:                                  hidden,
		"rm -rf `cat f`":                             hidden,
		`rm -rf "$1"`:                                hidden,
		`rm -rf "$D"/*`:                              hidden,
		`xargs rm -rf < list.txt`:                    hidden,
		`cat list | xargs rm -rf`:                    hidden,
		`ls | grep x | xargs rm -rf`:                 hidden,
		`for d in $(cat dirs); do rm -rf "$d"; done`: hidden,
		`while read d; do rm -rf "$d"; done < dirs`:  hidden,
		`find "$X" -delete`:                          hidden,
		`rsync -a --delete empty/ "$X"`:              hidden,
		// disks and volumes
		`nvme format /dev/nvme0n1`:                   disk,
		`nvme sanitize /dev/nvme0n1 -a 2`:            disk,
		`nvme delete-ns /dev/nvme0 -n 1`:             disk,
		`lvremove -f vg0/data`:                       disk,
		`sudo lvremove -y /dev/vg0/root`:             disk,
		`/sbin/lvm lvremove vg0/data`:                disk,
		`vgremove vg0`:                               disk,
		`vgremove -f $(vgs --noheadings -o vg_name)`: disk,
		`pvremove /dev/sdb`:                          disk,
		`zfs destroy -r tank/data`:                   disk,
		`zfs destroy tank@snap`:                      disk,
		`zpool destroy tank`:                         disk,
		`zpool labelclear -f /dev/sdb`:               disk,
		`mdadm --stop /dev/md0`:                      disk,
		`mdadm -S /dev/md0`:                          disk,
		`cryptsetup luksKillSlot /dev/sdb1 0`:        disk,
		`sgdisk -o $DISK`:                            disk,
		`parted -s $DISK mklabel gpt`:                disk,
		`mdadm --zero-superblock /dev/sdb1`:          rawDisk,
		`cryptsetup luksErase /dev/sdb1`:             rawDisk,
		`sgdisk --zap-all /dev/sda`:                  rawDisk,
		`parted /dev/sda rm 1`:                       rawDisk,
		`sfdisk --delete /dev/sda`:                   rawDisk,
		`blkdiscard /dev/nvme0n1`:                    rawDisk,
		// remote databases
		`dropdb -h db.prod.example.com app`:                                           remoteDB,
		`dropdb --host=db.prod.example.com app`:                                       remoteDB,
		`PGHOST=db.prod.example.com dropdb app`:                                       remoteDB,
		`ssh db.prod dropdb app`:                                                      remoteDB,
		`psql -h db.prod.example.com -c 'DROP DATABASE app'`:                          remoteDB,
		`psql postgresql://admin@db.prod.example.com/postgres -c 'DROP DATABASE app'`: remoteDB,
		`mysql -h db.prod.example.com -e 'drop database app'`:                         remoteDB,
		`mysql -hdb.prod -uroot -e 'DROP DATABASE app'`:                               remoteDB,
		`mongosh mongodb://db.prod.example.com/app --eval 'db.dropDatabase()'`:        remoteDB,
		`mongosh --host db.prod.example.com --eval 'db.dropDatabase()'`:               remoteDB,
		`redis-cli -h cache.prod.example.com FLUSHALL`:                                remoteDB,
	}
	allowed := []string{
		`git gc`, `git gc --prune=now`, `git gc --aggressive --prune=now`, `git reflog`,
		`git reflog expire --expire=90.days.ago --all`, `git clean -n`, `git clean -fdx`,
		`git filter-branch --tree-filter 'rm -f x' HEAD`,
		`rm -f .git/index.lock`, `rm -rf .git/rebase-merge`, `rm -rf .git/hooks/pre-commit`,
		`mkdir -p /tmp/scratch && cd /tmp/scratch && git init && git commit --allow-empty -m x && rm -rf .git`,
		`find . -name .git -prune -o -name '*.pyc' -print -delete`,
		`rm -rf build/ node_modules dist target/ .venv __pycache__`,
		`rm -rf "$TMPDIR/x"`, `dir=/tmp/x; rm -rf "$dir"`, `rm -rf "${BUILD_DIR:-./build}"`,
		`T=$(mktemp -d) && cd $T && rm -rf "$T"`, `rm -rf "$(mktemp -d)"`, `rm -rf "$OUT"/build`,
		`for d in */; do rm -rf "$d/node_modules"; done`, `find "$D" -name '*.pyc' -delete`,
		`find ~/projects -name node_modules -type d -prune -exec rm -rf {} +`,
		`rm -rf ~/go/pkg/mod`, `rm -rf ~/.cache/pip`, `rm -rf ~/src/app/build`, `rm -rf ~/.config/nvim/plugged`,
		`lvs`, `vgs`, `pvs`, `lvdisplay`, `zfs list`, `zpool status`, `zfs snapshot tank/data@before`,
		`zfs destroy -n tank/data@old`, `nvme list`, `nvme smart-log /dev/nvme0`, `mdadm --detail /dev/md0`,
		`cryptsetup luksDump /dev/sdb1`, `parted -l`,
		`psql -h localhost -c 'DROP DATABASE test'`, `dropdb app_test`, `dropdb -h localhost app_test`,
		`dropdb --if-exists app_test && createdb app_test`, `mysql -h localhost -u root -e 'DROP DATABASE IF EXISTS test'`,
		`psql -h db.prod.example.com -c 'select count(*) from users'`, `redis-cli -h cache.prod.example.com INFO`,
	}
	set, err := Compile(Options{})
	if err != nil {
		t.Fatal(err)
	}
	for cmd, w := range stopped {
		r := set.Evaluate(in(withHome(cmd, "/home/ann", "ann")))
		if r.RuleID != w.rule || r.Decision.Kind != w.kind || !strings.Contains(r.Decision.Reason, w.reason) {
			t.Errorf("%s: %s by %q (%q), want %s by %s naming %q", cmd, r.Decision.Kind, r.RuleID, r.Decision.Reason, w.kind, w.rule, w.reason)
		}
	}
	for _, cmd := range allowed {
		if r := set.Evaluate(in(withHome(cmd, "/home/ann", "ann"))); r.Matched && r.Decision.Kind != protocol.DecisionAllow {
			t.Errorf("%s: %s by %s, want it let through", cmd, r.Decision.Kind, r.RuleID)
		}
	}
}
