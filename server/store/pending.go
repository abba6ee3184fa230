package store

import (
	"context"
	"errors"
	"time"
)

// Placeholders until the store implements them (issue 14, in progress on a branch).

func (s *sqlStore) Cluster(context.Context, int64) (Cluster, error) {
	return Cluster{}, errors.ErrUnsupported
}
func (s *sqlStore) DeleteCluster(context.Context, int64) error { return errors.ErrUnsupported }
func (s *sqlStore) RenameCluster(context.Context, int64, string) (Cluster, error) {
	return Cluster{}, errors.ErrUnsupported
}
func (s *sqlStore) Prune(context.Context, time.Time) (int, error) { return 0, errors.ErrUnsupported }
func (s *sqlStore) WithLock(context.Context, string, func(context.Context) error) (bool, error) {
	return false, errors.ErrUnsupported
}
