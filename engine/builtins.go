package engine

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/topdown"
)

// Some builtins build, in one call, far more than their operands hold: replace(s, "", s)
// builds len(s)² bytes, concat a separator once per element, json.marshal a value that holds
// another a million times in a few bytes. Neither the deadline nor the heap guard interrupts
// a call, so each such builtin is wrapped: what the call would build is computed (or bounded
// from above) from its operands before it runs, and past a share of the memory bound the
// evaluation stops with a BuildLimitError at the call's file and line. sizedBuiltins lists
// them, and says why the others are left alone.
//
// OPA looks builtins up in its global table before any given to a query, so they are replaced
// there, once, for every evaluation in the process: scan's, serve's and policy test's.
func init() {
	for name, size := range sizedBuiltins {
		topdown.RegisterBuiltinFunc(name, bounded(name, size, topdown.GetBuiltin(name)))
	}
	checked(ast.BitsShiftLeft.Name, checkShift)
	checked(ast.Sprintf.Name, func(operands []*ast.Term) string {
		if format, ok := operands[0].Value.(ast.String); ok {
			if msg := checkFormat(string(format)); msg != "" {
				return "sprintf: " + msg
			}
		}
		return ""
	})
}

// checked wraps the builtin name with check, which says why a call is refused ("" to run it).
func checked(name string, check func(operands []*ast.Term) string) {
	next := topdown.GetBuiltin(name)
	topdown.RegisterBuiltinFunc(name, func(bctx topdown.BuiltinContext, operands []*ast.Term, iter func(*ast.Term) error) error {
		if msg := check(operands); msg != "" {
			return refuse(bctx, msg)
		}
		return next(bctx, operands, iter)
	})
}

func checkShift(operands []*ast.Term) string {
	if n, ok := operands[1].Value.(ast.Number); ok {
		if shift, ok := n.Int64(); !ok || shift > maxShift {
			return fmt.Sprintf("bits.lsh: a shift of %v bits is more than the %d the engine allows", n, maxShift)
		}
	}
	return ""
}

// Two builtins also spend their time in one call, beyond what their size says: bits.lsh(1,
// 1e10) writes the decimal text of a ten-billion-bit number for minutes, sprintf("%0999999999d")
// pads for as long. Both keep their meaning up to a bound no rule needs to reach.
const (
	maxShift       = 1 << 16 // bits: a number of about 20,000 digits
	maxFormatWidth = 10_000  // characters of a sprintf width or precision
)

// callShare is the share of the memory bound one builtin call may build: an eighth (16 MiB
// of the default 128), so a call that starts just below the bound ends well within the
// process's RSS, and no rule a person writes comes near it.
const callShare = 8

// sizeFunc returns what one call of a builtin would build from operands, in bytes, or an
// upper bound of it. It may stop counting once past budget, returning any number above it.
// Operands of the wrong type size to 0: the builtin itself then says what is wrong.
type sizeFunc func(operands []*ast.Term, budget int64) int64

// BuildLimitError is a builtin call refused before it ran, because it would have built more
// than one call may: Bound bytes, an eighth of the evaluation's memory bound.
type BuildLimitError struct {
	Builtin  string
	Bound    uint64
	Location *ast.Location
}

func (e *BuildLimitError) Error() string {
	return fmt.Sprintf("%v: %s: %s", e.Location, topdown.BuiltinErr, e.Message())
}

// Message is the error without its location: "replace would build more than 16 MiB in one call".
func (e *BuildLimitError) Message() string {
	return fmt.Sprintf("%s would build more than %s in one call", e.Builtin, mebibytes(e.Bound))
}

func mebibytes(n uint64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}

// bounded runs next only when size says the call builds at most the evaluation's share.
func bounded(name string, size sizeFunc, next topdown.BuiltinFunc) topdown.BuiltinFunc {
	return func(bctx topdown.BuiltinContext, operands []*ast.Term, iter func(*ast.Term) error) error {
		budget := callBudget(bctx.Context)
		if size(operands, int64(budget)) > int64(budget) {
			return topdown.Halt{Err: &BuildLimitError{Builtin: name, Bound: budget, Location: bctx.Location}}
		}
		return next(bctx, operands, iter)
	}
}

// callBudgetKey holds, in an evaluation's context, the bytes one builtin call may build.
type callBudgetKey struct{}

// withCallBudget is ctx for an evaluation whose heap may grow by memory bytes.
func withCallBudget(ctx context.Context, memory uint64) context.Context {
	return context.WithValue(ctx, callBudgetKey{}, max(memory/callShare, 1))
}

// callBudget is the share ctx carries; an evaluation the engine does not guard (the one OPA
// runs while preparing the query) gets that of the default bound.
func callBudget(ctx context.Context) uint64 {
	if ctx != nil {
		if b, ok := ctx.Value(callBudgetKey{}).(uint64); ok {
			return b
		}
	}
	return DefaultMemory / callShare
}

// refuse stops the evaluation: an ordinary builtin error would only make the expression
// undefined, and a rule that does not fire reads as a pack with nothing to say.
func refuse(bctx topdown.BuiltinContext, msg string) error {
	return topdown.Halt{Err: &topdown.Error{Code: topdown.BuiltinErr, Message: msg, Location: bctx.Location}}
}

// checkFormat says what is wrong with a format whose widths or precisions could be large:
// one past maxFormatWidth, or one taken from the arguments (*).
func checkFormat(format string) string {
	var msg string
	eachDirective(format, func(d directive) bool {
		if strings.Contains(d.flags, "*") {
			msg = fmt.Sprintf("%%%s takes its width from an argument; write it in the format, at most %d", d.flags, maxFormatWidth)
			return false
		}
		if strings.IndexAny(d.flags, "0123456789") < 0 {
			return true
		}
		for _, digits := range widths(d.flags) {
			if n, err := strconv.Atoi(digits); err != nil || n > maxFormatWidth {
				msg = fmt.Sprintf("a width or precision of %s is more than the %d the engine allows", digits, maxFormatWidth)
				return false
			}
		}
		return true
	})
	return msg
}

// widths are the runs of digits in a directive's flags: its width, precision and argument
// indexes.
func widths(flags string) []string {
	return strings.FieldsFunc(flags, func(r rune) bool { return r < '0' || r > '9' })
}
