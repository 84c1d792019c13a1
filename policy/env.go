package policy

import (
	"fmt"
	"sync"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/ext"
)

// celEnv is the one CEL environment every policy compiles in. It is built
// once; a cel.Env is safe for concurrent compilation.
var celEnv = sync.OnceValues(func() (*cel.Env, error) {
	opts := []cel.EnvOption{
		cel.OptionalTypes(),
		ext.Strings(),
		ext.Lists(),
		ext.Sets(),
		ext.Math(),
		ext.Encoders(),
		cel.Variable("event", cel.ObjectType(eventDef.typ.TypeName())),
		cel.Variable("payload", cel.DynType),
		cel.Variable("context", cel.MapType(cel.StringType, cel.DynType)),
		cel.Variable("principal", cel.ObjectType(principalDef.typ.TypeName())),
		cel.Variable("session", cel.ObjectType(sessionDef.typ.TypeName())),
		cel.Variable("config", cel.MapType(cel.StringType, cel.DynType)),
	}
	opts = append(opts, functions()...)
	opts = append(opts, func(e *cel.Env) (*cel.Env, error) {
		return cel.CustomTypeProvider(&provider{Provider: e.CELTypeProvider()})(e)
	})
	env, err := cel.NewEnv(opts...)
	if err != nil {
		return nil, fmt.Errorf("policy: building the CEL environment: %w", err)
	}
	return env, nil
})

// programOptions are applied to every compiled expression.
var programOptions = []cel.ProgramOption{
	cel.EvalOptions(cel.OptOptimize),
	cel.CustomDecoratorV2(compileMatches),
}
