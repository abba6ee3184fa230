// Package badtest imports a package under cmd/ in its tests only.
package badtest
