package job

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/file"
	"github.com/expr-lang/expr/vm"
	"github.com/goccy/go-yaml/ast"
)

// Env is what an expression sees: value (the decoded value: for JSON a
// map[string]any, list, string, float64, bool or nil; the registry formats
// give the same shapes, see the package documentation), key (a string, or nil
// for a record without key), headers (name to string value), topic,
// partition, offset and timestamp (a time.Time) of the input record.
type Env struct {
	Value     any               `expr:"value"`
	Key       any               `expr:"key"`
	Headers   map[string]string `expr:"headers"`
	Topic     string            `expr:"topic"`
	Partition int               `expr:"partition"`
	Offset    int               `expr:"offset"`
	Timestamp time.Time         `expr:"timestamp"`
}

// program is a compiled expression with the place it came from.
type program struct {
	prog        *vm.Program
	usesHeaders bool
}

// evaluator is per-goroutine scratch for running programs without
// allocating a VM per record.
type evaluator struct {
	machine vm.VM
	env     Env
}

var evaluators = sync.Pool{New: func() any { return new(evaluator) }}

// ExprError is an expression that failed to compile, with where it is.
type ExprError struct {
	Step       int    // 1-based pipeline step
	StepName   string //
	Field      string // e.g. "filter", "branch[1].when"
	Line       int    // YAML line of the expression (0 if unknown)
	Column     int    // YAML column of the error (0 if unknown)
	ExprColumn int    // column within the expression, 1-based
	Message    string
}

func (e *ExprError) Error() string {
	where := fmt.Sprintf("pipeline step %d (%s)", e.Step, e.StepName)
	if e.StepName == e.Field || e.Field == "" {
		where = fmt.Sprintf("pipeline step %d (%s)", e.Step, e.StepName)
	} else {
		where += " " + e.Field
	}
	if e.Line > 0 {
		where += fmt.Sprintf(" at line %d, column %d", e.Line, e.Column)
	}
	return fmt.Sprintf("job: %s: expression error: %s (expression column %d)", where, e.Message, e.ExprColumn)
}

func (e *ExprError) Unwrap() error { return ErrInvalid }

// compileExpr compiles one expression of a step.
func compileExpr(f *ast.File, st Step, field, path, src string, opts ...expr.Option) (*program, error) {
	opts = append([]expr.Option{expr.Env(&Env{})}, opts...)
	prog, err := expr.Compile(src, opts...)
	if err == nil {
		return &program{prog: prog, usesHeaders: containsIdent(src, "headers")}, nil
	}
	xe := &ExprError{Step: st.Index, StepName: st.Name, Field: field, Message: err.Error(), ExprColumn: 1}
	var fe *file.Error
	if errors.As(err, &fe) {
		xe.Message = fe.Message
		xe.ExprColumn = fe.Column + 1
		line, col, quoted := position(f, path)
		xe.Line, xe.Column = line, col
		if line > 0 && fe.Line <= 1 {
			xe.Column = col + fe.Column
			if quoted {
				xe.Column++
			}
		} else if line > 0 {
			xe.Line = line + fe.Line - 1
			xe.Column = fe.Column + 1
		}
	} else {
		xe.Line, xe.Column, _ = position(f, path)
	}
	return nil, xe
}

func containsIdent(src, ident string) bool {
	for i := 0; i+len(ident) <= len(src); i++ {
		if src[i:i+len(ident)] == ident {
			return true
		}
	}
	return false
}

func (p *program) run(ev *evaluator) (any, error) {
	return ev.machine.Run(p.prog, &ev.env)
}
