package badtest_test

import (
	"testing"

	"example.com/layers/cmd/tool/lib"
)

func TestF(t *testing.T) { lib.F() }
