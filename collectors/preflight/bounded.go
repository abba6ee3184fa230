package preflight

import (
	"cmp"
	"slices"

	"github.com/upgradescope/upgradescope/inventory"
)

// bounded is a list that keeps, of everything added, the first max items in its order
// (inventory.MaxPreflightItems unless set): past twice max it is sorted and cut, the cut
// items counted, so a hostile repository of a million webhooks holds a few thousand in
// memory. Which items are kept does not depend on when the list was cut, as long as the
// order is total.
type bounded[T any] struct {
	max     int
	items   []T
	omitted int
}

func (b *bounded[T]) limit() int {
	if b.max > 0 {
		return b.max
	}
	return inventory.MaxPreflightItems
}

// add appends v, and cuts the list when it has grown past twice its bound.
func (b *bounded[T]) add(v T, order func(a, b T) int) {
	b.items = append(b.items, v)
	if len(b.items) > 2*b.limit() {
		b.cut(order)
	}
}

func (b *bounded[T]) cut(order func(a, b T) int) {
	slices.SortStableFunc(b.items, order)
	if max := b.limit(); len(b.items) > max {
		b.omitted += len(b.items) - max
		clear(b.items[max:])
		b.items = b.items[:max]
	}
}

// merge takes other's items and count.
func (b *bounded[T]) merge(other *bounded[T], order func(a, b T) int) {
	b.omitted += other.omitted
	for _, v := range other.items {
		b.add(v, order)
	}
}

// section answers the items sorted and cut to the bound, and how many were left out.
func (b *bounded[T]) section(order func(a, b T) int) ([]T, int) {
	b.cut(order)
	return slices.Clone(b.items), b.omitted
}

// refOrder orders object references by namespace, name, kind, file, line and chart.
func refOrder(a, b inventory.ObjectRef) int {
	return cmp.Or(
		cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name), cmp.Compare(a.Kind, b.Kind),
		cmp.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line), cmp.Compare(a.RenderedFrom, b.RenderedFrom),
	)
}

// names keeps the first inventory.MaxPreflightNames of sorted, distinct names.
func names(all []string) ([]string, int) {
	all = slices.Compact(slices.Sorted(slices.Values(all)))
	if len(all) > inventory.MaxPreflightNames {
		return all[:inventory.MaxPreflightNames], len(all) - inventory.MaxPreflightNames
	}
	return all, 0
}
