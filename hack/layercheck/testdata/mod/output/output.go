// Package output links OPA through engine, which the no-OPA rule refuses.
package output

import (
	"fmt"

	"example.com/layers/engine"
)

// S prints engine.V.
var S = fmt.Sprint(engine.V)
