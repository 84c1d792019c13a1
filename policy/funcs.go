package policy

import (
	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
)

// functions returns the CEL functions this package adds to the standard
// library. docs/policy.md lists them with examples.
func functions() []cel.EnvOption {
	strList := cel.ListType(cel.StringType)
	unary := func(name string, arg, result *cel.Type, fn func(ref.Val) ref.Val) cel.EnvOption {
		return cel.Function(name, cel.Overload(name+"_"+typeTag(arg), []*cel.Type{arg}, result, cel.UnaryBinding(fn)))
	}
	binary := func(name string, a, b, result *cel.Type, fn func(ref.Val, ref.Val) ref.Val) cel.EnvOption {
		return cel.Function(name, cel.Overload(name+"_"+typeTag(a)+"_"+typeTag(b), []*cel.Type{a, b}, result, cel.BinaryBinding(fn)))
	}
	return append([]cel.EnvOption{
		binary("glob", cel.StringType, cel.DynType, cel.BoolType, celGlob),
		binary("path_within", cel.StringType, cel.DynType, cel.BoolType, celPathWithin),
		binary("path_match", cel.StringType, cel.DynType, cel.BoolType, celPathMatch),
		cel.Function("path_match", cel.Overload("path_match_string_dyn_string",
			[]*cel.Type{cel.StringType, cel.DynType, cel.StringType}, cel.BoolType, cel.FunctionBinding(celPathMatchHome))),
		binary("path_may_match", cel.StringType, cel.DynType, cel.BoolType, celPathMayMatch),
		cel.Function("argv_names_path", cel.Overload("argv_names_path_dyn_dyn_dyn",
			[]*cel.Type{cel.DynType, cel.DynType, cel.DynType}, cel.BoolType, cel.FunctionBinding(celArgvNamesPath)),
			cel.Overload("argv_names_path_dyn_dyn_dyn_dyn",
				[]*cel.Type{cel.DynType, cel.DynType, cel.DynType, cel.DynType}, cel.BoolType, cel.FunctionBinding(celArgvNamesPath))),
		cel.Function("command_in", cel.Overload("command_in_string_list_dyn",
			[]*cel.Type{cel.StringType, strList, cel.DynType}, cel.BoolType, cel.FunctionBinding(celCommandIn))),
		binary("host_allowed", cel.StringType, cel.DynType, cel.BoolType, celHostAllowed),
		unary("canonical_host", cel.StringType, cel.StringType, func(v ref.Val) ref.Val {
			return types.String(canonicalHost(string(v.(types.String))))
		}),
		unary("url_host", cel.StringType, cel.StringType, func(v ref.Val) ref.Val {
			return types.String(urlHost(string(v.(types.String))))
		}),
		unary("shell_command", cel.DynType, cel.StringType, func(v ref.Val) ref.Val {
			return types.String(shellCommand(v))
		}),
		unary("action_paths", cel.DynType, strList, func(v ref.Val) ref.Val {
			return types.NewStringList(types.DefaultTypeAdapter, actionPaths(v))
		}),
		unary("action_hosts", cel.DynType, strList, func(v ref.Val) ref.Val {
			return types.NewStringList(types.DefaultTypeAdapter, actionHosts(v))
		}),
		unary("secret_kinds", cel.DynType, strList, celSecretKinds),
		unary("has_secret", cel.DynType, cel.BoolType, celHasSecret),
		unary("redact_secrets", cel.DynType, cel.DynType, celRedactSecrets),
	}, selfProtectionFunctions()...)
}

func typeTag(t *cel.Type) string {
	if t == cel.DynType {
		return "dyn"
	}
	return t.String()
}

// celGlob implements glob(string, pattern or list of patterns) -> bool.
func celGlob(s, patterns ref.Val) ref.Val {
	ps, err := celStringList(patterns)
	if err != nil {
		return err
	}
	return types.Bool(globAny(ps, string(s.(types.String))))
}

// celPathWithin implements path_within(string, root or list of roots).
func celPathWithin(p, roots ref.Val) ref.Val {
	rs, err := celStringList(roots)
	if err != nil {
		return err
	}
	return types.Bool(pathWithin(string(p.(types.String)), rs))
}

// celHostAllowed implements host_allowed(string, entry or list of entries).
func celHostAllowed(h, allowed ref.Val) ref.Val {
	as, err := celStringList(allowed)
	if err != nil {
		return err
	}
	return types.Bool(hostAllowed(string(h.(types.String)), as))
}
