// Package store holds the exempt backend.
package store

type sqlStore struct{}

func (*sqlStore) M00() {}
func (*sqlStore) M01() {}
func (*sqlStore) M02() {}
func (*sqlStore) M03() {}
func (*sqlStore) M04() {}
func (*sqlStore) M05() {}
func (*sqlStore) M06() {}
func (*sqlStore) M07() {}
func (*sqlStore) M08() {}
func (*sqlStore) M09() {}
func (*sqlStore) M10() {}
func (*sqlStore) M11() {}
func (*sqlStore) M12() {}
func (*sqlStore) M13() {}
func (*sqlStore) M14() {}
func (*sqlStore) M15() {}
func (*sqlStore) M16() {}
func (*sqlStore) M17() {}
func (*sqlStore) M18() {}
func (*sqlStore) M19() {}
func (*sqlStore) M20() {}
func (*sqlStore) M21() {}
func (*sqlStore) M22() {}
func (*sqlStore) M23() {}
func (*sqlStore) M24() {}
func (*sqlStore) M25() {}
func (*sqlStore) M26() {}

var _ = new(sqlStore)
