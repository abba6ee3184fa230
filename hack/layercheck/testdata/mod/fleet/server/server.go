// Package server holds a type one method over the bound and one at it.
package server

// Big has 26 methods, pointer and value receivers together.
type Big struct{}

// Fits has 25 methods.
type Fits struct{}

// Set is generic; its methods count as Set's.
type Set[T comparable] map[T]struct{}

func (Big) M00()  {}
func (*Big) M01() {}
func (Big) M02()  {}
func (*Big) M03() {}
func (Big) M04()  {}
func (*Big) M05() {}
func (Big) M06()  {}
func (*Big) M07() {}
func (Big) M08()  {}
func (*Big) M09() {}
func (Big) M10()  {}
func (*Big) M11() {}
func (Big) M12()  {}
func (*Big) M13() {}
func (Big) M14()  {}
func (*Big) M15() {}
func (Big) M16()  {}
func (*Big) M17() {}
func (Big) M18()  {}
func (*Big) M19() {}
func (Big) M20()  {}
func (*Big) M21() {}
func (Big) M22()  {}
func (*Big) M23() {}
func (Big) M24()  {}
func (*Big) M25() {}

func (f *Fits) M00() {}
func (f *Fits) M01() {}
func (f *Fits) M02() {}
func (f *Fits) M03() {}
func (f *Fits) M04() {}
func (f *Fits) M05() {}
func (f *Fits) M06() {}
func (f *Fits) M07() {}
func (f *Fits) M08() {}
func (f *Fits) M09() {}
func (f *Fits) M10() {}
func (f *Fits) M11() {}
func (f *Fits) M12() {}
func (f *Fits) M13() {}
func (f *Fits) M14() {}
func (f *Fits) M15() {}
func (f *Fits) M16() {}
func (f *Fits) M17() {}
func (f *Fits) M18() {}
func (f *Fits) M19() {}
func (f *Fits) M20() {}
func (f *Fits) M21() {}
func (f *Fits) M22() {}
func (f *Fits) M23() {}
func (f *Fits) M24() {}

func (s Set[T]) M00() {}
func (s Set[T]) M01() {}
func (s Set[T]) M02() {}
func (s Set[T]) M03() {}
func (s Set[T]) M04() {}
func (s Set[T]) M05() {}
func (s Set[T]) M06() {}
func (s Set[T]) M07() {}
func (s Set[T]) M08() {}
func (s Set[T]) M09() {}
func (s Set[T]) M10() {}
func (s Set[T]) M11() {}
func (s Set[T]) M12() {}
func (s Set[T]) M13() {}
func (s Set[T]) M14() {}
func (s Set[T]) M15() {}
func (s Set[T]) M16() {}
func (s Set[T]) M17() {}
func (s Set[T]) M18() {}
func (s Set[T]) M19() {}
func (s Set[T]) M20() {}
func (s Set[T]) M21() {}
func (s Set[T]) M22() {}
func (s Set[T]) M23() {}
func (s Set[T]) M24() {}
func (s Set[T]) M25() {}
