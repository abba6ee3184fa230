// Package engine links the fake OPA.
package engine

import "github.com/open-policy-agent/opa/ast"

// V is a value.
var V ast.Value
