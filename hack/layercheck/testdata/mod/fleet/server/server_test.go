package server

// A method declared in a test file is not part of the type the package ships.
func (Fits) extra() {}

var _ = Fits.extra
