package engine

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/topdown"
)

// Two builtins build a value as large as an operand says in one call, which neither the
// deadline nor the heap guard can interrupt: bits.lsh(1, 1e10) allocates 1.25 GB and then
// spends minutes writing its decimal text, and sprintf("%0999999999d", [1]) a 1 GB string.
// Both keep their meaning up to a bound no rule needs to reach, and past it stop the
// evaluation with an error at the call's file and line. OPA looks builtins up in its global
// table before any given to a query, so they are replaced there, once, for every evaluation
// in the process (policy test's included).
const (
	maxShift       = 1 << 16 // bits: a number of about 20,000 digits
	maxFormatWidth = 10_000  // characters of a sprintf width or precision
)

func init() {
	lsh := topdown.GetBuiltin(ast.BitsShiftLeft.Name)
	topdown.RegisterBuiltinFunc(ast.BitsShiftLeft.Name, func(bctx topdown.BuiltinContext, operands []*ast.Term, iter func(*ast.Term) error) error {
		if n, ok := operands[1].Value.(ast.Number); ok {
			if shift, ok := n.Int64(); !ok || shift > maxShift {
				return refuse(bctx, fmt.Sprintf("bits.lsh: a shift of %v bits is more than the %d the engine allows", n, maxShift))
			}
		}
		return lsh(bctx, operands, iter)
	})
	sprintf := topdown.GetBuiltin(ast.Sprintf.Name)
	topdown.RegisterBuiltinFunc(ast.Sprintf.Name, func(bctx topdown.BuiltinContext, operands []*ast.Term, iter func(*ast.Term) error) error {
		if format, ok := operands[0].Value.(ast.String); ok {
			if msg := checkFormat(string(format)); msg != "" {
				return refuse(bctx, "sprintf: "+msg)
			}
		}
		return sprintf(bctx, operands, iter)
	})
}

// refuse stops the evaluation: an ordinary builtin error would only make the expression
// undefined, and a rule that does not fire reads as a pack with nothing to say.
func refuse(bctx topdown.BuiltinContext, msg string) error {
	return topdown.Halt{Err: &topdown.Error{Code: topdown.BuiltinErr, Message: msg, Location: bctx.Location}}
}

// checkFormat says what is wrong with a format whose widths or precisions could be large:
// one past maxFormatWidth, or one taken from the arguments (*).
func checkFormat(format string) string {
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			continue
		}
		j := i + 1
		for j < len(format) && strings.IndexByte("+-# 0123456789.*[]", format[j]) >= 0 {
			j++
		}
		directive := format[i+1 : j]
		if strings.Contains(directive, "*") {
			return fmt.Sprintf("%%%s takes its width from an argument; write it in the format, at most %d", directive, maxFormatWidth)
		}
		for _, digits := range strings.FieldsFunc(directive, func(r rune) bool { return r < '0' || r > '9' }) {
			if n, err := strconv.Atoi(digits); err != nil || n > maxFormatWidth {
				return fmt.Sprintf("a width or precision of %s is more than the %d the engine allows", digits, maxFormatWidth)
			}
		}
		i = j
	}
	return ""
}
