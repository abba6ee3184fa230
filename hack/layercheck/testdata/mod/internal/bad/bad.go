// Package bad imports a package under cmd/.
package bad

import "example.com/layers/cmd/tool/lib"

// F calls lib.F.
func F() { lib.F() }
