package policy

import (
	"testing"

	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
)

// TestCommandSetIsCommandIn: the planned command_in answers what the
// function answers over the same list, for every program and argv,
// including the types command_in refuses.
func TestCommandSetIsCommandIn(t *testing.T) {
	cmds := [][]string{{"kubectl", "config", "view", "--raw"}, {"gh", "auth", "token"}, {"unshadow"},
		{"git", "credential", "fill"}, {"git", "credential", "approve"}, {}, {"gh", "token"}, {"x", "a", "a"}}
	lists := make([]ref.Val, 0, len(cmds)+2)
	for _, c := range cmds {
		lists = append(lists, types.DefaultTypeAdapter.NativeToValue(c))
	}
	// command_in reads a string element as a one-word command and null as none.
	lists = append(lists, types.String("su"), types.NullValue)
	all := append(append([][]string{}, cmds...), []string{"su"}, nil)
	whole := types.NewRefValList(types.DefaultTypeAdapter, lists)
	set := compileCommandSet(all)
	planned, ok := constCommands(whole)
	if !ok || len(planned) != len(all) {
		t.Fatalf("constCommands read %d commands (%v), want %d", len(planned), ok, len(all))
	}
	node := &commandSetNode{set: compileCommandSet(planned)}
	progs := []ref.Val{types.String("kubectl"), types.String("gh"), types.String("git"), types.String("unshadow"),
		types.String("su"), types.String("x"), types.String(""), types.String("ls"), types.Int(3), types.NullValue}
	argvs := []ref.Val{
		types.DefaultTypeAdapter.NativeToValue([]string{"kubectl", "config", "view", "--raw"}),
		types.DefaultTypeAdapter.NativeToValue([]string{"config", "--raw"}),
		types.DefaultTypeAdapter.NativeToValue([]string{"auth", "token"}),
		types.DefaultTypeAdapter.NativeToValue([]string{"credential", "fill"}),
		types.DefaultTypeAdapter.NativeToValue([]string{"a"}),
		types.DefaultTypeAdapter.NativeToValue([]string{}),
		types.NewRefValList(types.DefaultTypeAdapter, []ref.Val{types.String("token"), types.String("auth")}),
		types.NewRefValList(types.DefaultTypeAdapter, []ref.Val{types.String("token"), types.Int(1)}),
		types.String("token"), types.NullValue, types.Int(7),
	}
	for _, p := range progs {
		for _, a := range argvs {
			want := celCommandIn(p, a, whole)
			got := node.match(p, a)
			if types.IsError(want) != types.IsError(got) || !types.IsError(want) && want.Equal(got) != types.True {
				t.Errorf("command_in(%v, %v): function %v, planned %v", p.Value(), a.Value(), want, got)
			}
		}
	}
	for _, c := range all {
		if len(c) > 0 && !set.match(c[0], c[1:]) {
			t.Errorf("%q does not match itself", c)
		}
	}
}

// TestCommandInPlannedInPacks: the default packs' command_in over a
// parameter is planned, and decides as before (a printer is held, a
// look-alike is not).
func TestCommandInPlannedInPacks(t *testing.T) {
	set, err := Compile(Options{})
	if err != nil {
		t.Fatal(err)
	}
	planned := 0
	for _, r := range set.rules {
		if r.narrow != nil {
			planned += len(r.narrow.cmds)
		}
	}
	if planned == 0 {
		t.Fatal("no command_in of the default packs was planned")
	}
	for cmd, want := range map[string]bool{
		"gh auth token":                     true,
		"'gh' auth token | cat":             true,
		"sh -c 'kubectl config view --raw'": true,
		"gh auth status":                    false,
		"kubectl config view":               false,
	} {
		r := set.Evaluate(inCwd(cmd))
		if got := r.Matched && r.RuleID == "credentials.print"; got != want {
			t.Errorf("%s: credentials.print %v, want %v (%s)", cmd, got, want, r.RuleID)
		}
	}
}
